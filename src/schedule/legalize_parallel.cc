#include "schedule/passes.h"
#include "te/functor.h"

namespace tuner::schedule {

using namespace te;

namespace {

class ParallelLegalizer : public IRMutator {
 protected:
  Stmt visit_For(const ForNode* op, const Stmt& s) override {
    bool par = op->for_kind == ForKind::Parallel;
    if (par && depth_ > 0) {
      Stmt body = mutate(op->body);
      return make_for(op->var, op->min, op->extent, ForKind::Serial, body);
    }
    depth_ += par;
    Stmt r = IRMutator::visit_For(op, s);
    depth_ -= par;
    return r;
  }

 private:
  int depth_ = 0;
};

}  // namespace

Stmt legalize_parallel(const Stmt& s) { return s ? ParallelLegalizer().mutate(s) : s; }

}  // namespace tuner::schedule
