// Barrier insertion for shared memory. In a sequence, a statement that reads a shared
// buffer written since the last barrier (or writes one read since then) gets a barrier
// before it. A loop whose body both writes and reads a shared buffer starts its body with a
// barrier, so an iteration does not overwrite what slower threads still read from the one
// before. (At the start, not the end: PoCL 3.1 asserts, "Multiple outgoing edges from exit
// block", on a barrier that ends a loop body.)
#include <set>

#include "schedule/passes.h"
#include "schedule/state.h"
#include "te/functor.h"

namespace tuner::schedule {

using namespace te;

namespace {

using BufSet = std::set<const BufferNode*>;

struct Access {
  BufSet reads, writes;
};

Access shared_access(const Stmt& s) {
  class V : public IRVisitor {
   public:
    Access a;
    using IRVisitor::visit;

   protected:
    void visit_BufferLoad(const BufferLoadNode* op, const Expr& e) override {
      if (op->buffer->scope == MemScope::Shared) a.reads.insert(op->buffer.get());
      IRVisitor::visit_BufferLoad(op, e);
    }
    void visit_BufferStore(const BufferStoreNode* op, const Stmt& s) override {
      if (op->buffer->scope == MemScope::Shared) a.writes.insert(op->buffer.get());
      IRVisitor::visit_BufferStore(op, s);
    }
  } v;
  v.visit(s);
  return v.a;
}

bool intersects(const BufSet& a, const BufSet& b) {
  for (auto* x : a)
    if (b.count(x)) return true;
  return false;
}

class Inserter : public IRMutator {
 public:
  explicit Inserter(const std::array<int64_t, 3>& block) : block_(block) {}

 protected:
  Stmt visit_For(const ForNode* op, const Stmt& s) override {
    std::string saved = divergent_;
    const int64_t* ext = as_const_int(op->extent);
    if (op->for_kind >= ForKind::ThreadIdxX && op->for_kind <= ForKind::ThreadIdxZ) {
      int64_t launch = block_[size_t(int(op->for_kind) - int(ForKind::ThreadIdxX))];
      if (!ext || *ext < launch)
        divergent_ = std::string("a loop bound to ") + for_kind_name(op->for_kind) + " of extent " +
                     (ext ? std::to_string(*ext) : "?") + " < " + std::to_string(launch) + " threads";
    }
    Stmt body = mutate(op->body);
    if (!is_thread_index(op->for_kind) && (!ext || *ext > 1)) {
      Access a = shared_access(body);
      if (intersects(a.writes, a.reads)) body = seq({barrier(a.writes), body});
    }
    divergent_ = saved;
    if (body.same_as(op->body)) return s;
    return make_for(op->var, op->min, op->extent, op->for_kind, body);
  }
  Stmt visit_IfThenElse(const IfThenElseNode* op, const Stmt& s) override {
    std::string saved = divergent_;
    if (divergent_.empty()) divergent_ = "a conditional";
    Stmt r = IRMutator::visit_IfThenElse(op, s);
    divergent_ = saved;
    return r;
  }
  Stmt visit_SeqStmt(const SeqStmtNode* op, const Stmt& s) override {
    Stmt m = IRMutator::visit_SeqStmt(op, s);
    auto* sq = m.as<SeqStmtNode>();
    if (!sq) return m;
    std::vector<Stmt> out;
    BufSet pending_w, pending_r;
    bool changed = false;
    for (auto& x : sq->seq) {
      if (x.as<BarrierNode>()) {
        pending_w.clear();
        pending_r.clear();
        out.push_back(x);
        continue;
      }
      Access a = shared_access(x);
      if (intersects(a.reads, pending_w) || intersects(a.writes, pending_r)) {
        BufSet both = pending_w;
        both.insert(pending_r.begin(), pending_r.end());
        out.push_back(barrier(both));
        pending_w.clear();
        pending_r.clear();
        changed = true;
      }
      pending_w.insert(a.writes.begin(), a.writes.end());
      pending_r.insert(a.reads.begin(), a.reads.end());
      out.push_back(x);
    }
    return changed ? seq(out) : m;
  }

 private:
  Stmt barrier(const BufSet& bufs) {
    if (!divergent_.empty()) {
      std::string names;
      for (auto* b : bufs) names += (names.empty() ? "" : ", ") + b->name;
      throw ScheduleError("shared buffer " + names + " needs a barrier inside " + divergent_ +
                          " (not every thread of the block reaches it)");
    }
    return make_barrier();
  }

  std::array<int64_t, 3> block_;
  std::string divergent_;  // why the current code is divergent; empty when uniform
};

}  // namespace

Stmt insert_barriers(const Stmt& s, const std::array<int64_t, 3>& block) {
  return s ? Inserter(block).mutate(s) : s;
}

}  // namespace tuner::schedule
