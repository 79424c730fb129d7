#include <set>

#include "schedule/passes.h"
#include "support/error.h"
#include "te/functor.h"
#include "te/printer.h"

namespace tuner::schedule {

using namespace te;

namespace {

class Verifier : public IRVisitor {
 public:
  explicit Verifier(const std::vector<Buffer>& args) {
    for (auto& b : args) buffers_.insert(b.get());
  }
  using IRVisitor::visit;

 protected:
  void visit_Var(const VarNode* op, const Expr&) override {
    INTERNAL_CHECK(vars_.count(op)) << "variable " << op->name << " is used outside its loop";
  }
  void visit_BufferLoad(const BufferLoadNode* op, const Expr& e) override {
    check_buffer(op->buffer, op->indices.size());
    IRVisitor::visit_BufferLoad(op, e);
  }
  void visit_BufferStore(const BufferStoreNode* op, const Stmt& s) override {
    check_buffer(op->buffer, op->indices.size());
    INTERNAL_CHECK(op->value.type().lanes == op->indices[0].type().lanes)
        << "store to " << op->buffer->name << " mixes vector widths";
    IRVisitor::visit_BufferStore(op, s);
  }
  void visit_For(const ForNode* op, const Stmt& s) override {
    visit(op->min);
    visit(op->extent);
    vars_.insert(op->var.get());
    visit(op->body);
    vars_.erase(op->var.get());
  }
  void visit_Allocate(const AllocateNode* op, const Stmt& s) override {
    buffers_.insert(op->buffer.get());
    visit(op->body);
    buffers_.erase(op->buffer.get());
  }
  void visit_TensorRead(const TensorReadNode* op, const Expr&) override {
    INTERNAL_CHECK(false) << "tensor " << op->tensor->name << " read survives lowering";
  }
  void visit_Reduce(const ReduceNode*, const Expr&) override {
    INTERNAL_CHECK(false) << "a reduction survives lowering";
  }

 private:
  void check_buffer(const Buffer& b, size_t n) {
    INTERNAL_CHECK(buffers_.count(b.get())) << "buffer " << b->name << " used outside its allocation";
    INTERNAL_CHECK(n == 1) << "buffer " << b->name << " access is not flattened";
  }
  std::set<const VarNode*> vars_;
  std::set<const BufferNode*> buffers_;
};

}  // namespace

void verify_lowered(const Stmt& s, const std::vector<Buffer>& args) {
  if (s) Verifier(args).visit(s);
}

}  // namespace tuner::schedule
