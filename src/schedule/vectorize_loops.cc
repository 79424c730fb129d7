// Vectorization: a vectorized loop `for v in [min, min+L)` whose body is straight-line code
// becomes one vector statement per store, with v replaced by ramp(min, 1, L). Legal only when
// every lane writes a distinct element (store index a ramp with non-zero stride) and a buffer
// written in the body is read only at the element the same lane writes (no cross-lane
// dependence). Anything else keeps the serial loop: correct first.
#include <map>

#include "schedule/passes.h"
#include "te/bounds.h"
#include "te/functor.h"
#include "te/simplify.h"

namespace tuner::schedule {

using namespace te;

namespace {

struct NotVectorizable {};

// Rewrites expressions of one lane into vector expressions.
class LaneWidener : public IRMutator {
 public:
  LaneWidener(const VarNode* v, Expr ramp, const RangeMap& ranges)
      : var_(v), ramp_(std::move(ramp)), ranges_(ranges) {}

 protected:
  Expr visit_Var(const VarNode* op, const Expr& e) override { return op == var_ ? ramp_ : e; }
  Expr visit_Call(const CallNode* op, const Expr& e) override {
    Expr r = IRMutator::visit_Call(op, e);
    if (auto* c = r.as<CallNode>(); c && c->op == Intrinsic::IfThenElse) {
      // A lane-dependent condition (padding at a border) becomes a per-lane choice whose
      // branches codegen evaluates under a mask: their vector loads touch only the lanes
      // that take them. A scalar load there would run for every lane: not vectorizable.
      // A condition the same in every lane (a channel of a concatenation read through a
      // reshape, its vector within one input) stays scalar: codegen branches, each branch
      // unmasked (masked, a load at a broadcast index was a gather; shufflenet's channel
      // shuffle after a QLinearConcat).
      Expr cond = c->args[0];
      if (cond.type().is_vector())
        if (Expr u = simplify(cond, ranges_); auto* b = u.as<BroadcastNode>()) cond = b->value;
      if (cond.type().is_vector()) {
        check_maskable(c->args[1]);
        check_maskable(c->args[2]);
      }
      int lanes = std::max({cond.type().lanes, c->args[1].type().lanes, c->args[2].type().lanes});
      if (lanes > 1) {
        Expr t = c->args[1].type().is_vector() ? c->args[1] : broadcast(c->args[1], lanes);
        Expr f = c->args[2].type().is_vector() ? c->args[2] : broadcast(c->args[2], lanes);
        return if_then_else(cond, t, f);
      }
    }
    return r;
  }

 private:
  // Throws unless `e` can be evaluated for all lanes with its loads masked. A scalar load at
  // a constant index (a zero point, a scale) reads the same element in every lane, wherever
  // the condition holds: in bounds either way.
  static void check_maskable(const Expr& e) {
    post_order_visit(e, [](const Expr& x) {
      if (auto* l = x.as<BufferLoadNode>(); l && l->indices[0].type().is_scalar()) {
        const int64_t* i = as_const_int(l->indices[0]);
        if (!i || *i != 0) throw NotVectorizable();
      }
    });
    if (has_unsafe_division(e)) throw NotVectorizable();  // it would trap in an idle lane
  }

  const VarNode* var_;
  Expr ramp_;
  const RangeMap& ranges_;
};

class LoopVectorizer : public IRMutator {
 public:
  explicit LoopVectorizer(int max_lanes) : max_lanes_(max_lanes) {}

 protected:
  Stmt visit_For(const ForNode* op, const Stmt& s) override {
    auto* ext = as_const_int(op->extent);
    ranges_[op->var.get()] = loop_var_range(op, ranges_);
    Stmt body = mutate(op->body);
    ranges_.erase(op->var.get());
    if (op->for_kind != ForKind::Vectorized)
      return body.same_as(op->body) ? s : make_for(op->var, op->min, op->extent, op->for_kind, body);
    if (ext && *ext >= 2 && *ext <= max_lanes_) {
      try {
        return vectorize(body, op->var, op->min, int(*ext));
      } catch (const NotVectorizable&) {
      }
    }
    return make_for(op->var, op->min, op->extent, ForKind::Serial, body);
  }

 private:
  // Checks the body is straight-line and collects each written buffer's (single) index.
  void check(const Stmt& s, const VarNode* v, std::map<const BufferNode*, Expr>& writes) {
    if (!s) return;
    if (auto* q = s.as<SeqStmtNode>()) {
      for (auto& x : q->seq) check(x, v, writes);
    } else if (auto* st = s.as<BufferStoreNode>()) {
      // Already vector (an inner loop was vectorized): one level of vectors only.
      if (st->indices[0].type().is_vector()) throw NotVectorizable();
      if (!uses_var(st->indices[0], v)) throw NotVectorizable();
      auto [it, fresh] = writes.emplace(st->buffer.get(), st->indices[0]);
      if (!fresh && !deep_equal(it->second, st->indices[0])) throw NotVectorizable();
    } else if (auto* i = s.as<IfThenElseNode>()) {
      if (uses_var(i->cond, v)) throw NotVectorizable();
      check(i->then_case, v, writes);
      check(i->else_case, v, writes);
    } else {
      throw NotVectorizable();  // loops, allocations
    }
  }

  Stmt vectorize(const Stmt& body, const Var& v, const Expr& min, int lanes) {
    std::map<const BufferNode*, Expr> writes;
    check(body, v.get(), writes);
    visit_exprs(body, [&](const Expr& e) {
      auto* l = e.as<BufferLoadNode>();
      if (!l) return;
      auto it = writes.find(l->buffer.get());
      if (it != writes.end() && !deep_equal(it->second, l->indices[0])) throw NotVectorizable();
    });
    Stmt whole = widen_at(body, v, min, lanes);
    if (gathers(whole) == 0) return whole;
    // Indices contiguous only piecewise (a packed weight's channel blocks: ramp(j, 1, 32) / 16)
    // become gathers at full width; as consecutive narrower pieces, each a plain vector load.
    // Pieces under 4 lanes would be scalar code in all but name: the gather stays then.
    for (int w = lanes / 2; w >= 4; --w) {
      if (lanes % w) continue;
      std::vector<Stmt> parts;
      bool plain = true;
      for (int i = 0; i < lanes / w && plain; ++i) {
        parts.push_back(widen_at(body, v, min + make_int(int64_t(i) * w, min.type()), w));
        plain = gathers(parts.back()) == 0;
      }
      if (plain) return seq(parts);
    }
    return whole;
  }

  Stmt widen_at(const Stmt& body, const Var& v, const Expr& min, int lanes) {
    LaneWidener widen(v.get(), ramp(simplify(min, ranges_), make_int(1), lanes), ranges_);
    return widen_stmt(body, widen, lanes);
  }

  // Loads whose vector index is neither a ramp nor a broadcast: one scalar load per lane.
  static int gathers(const Stmt& s) {
    int n = 0;
    visit_exprs(s, [&](const Expr& e) {
      auto* l = e.as<BufferLoadNode>();
      if (!l || l->indices[0].type().is_scalar()) return;
      if (!l->indices[0].as<RampNode>() && !l->indices[0].as<BroadcastNode>()) ++n;
    });
    return n;
  }

  Stmt widen_stmt(const Stmt& s, LaneWidener& widen, int lanes) {
    if (!s) return s;
    if (auto* q = s.as<SeqStmtNode>()) {
      std::vector<Stmt> out;
      for (auto& x : q->seq) out.push_back(widen_stmt(x, widen, lanes));
      return seq(out);
    }
    if (auto* i = s.as<IfThenElseNode>())
      return if_then_else_stmt(i->cond, widen_stmt(i->then_case, widen, lanes),
                               widen_stmt(i->else_case, widen, lanes));
    auto* st = s.as<BufferStoreNode>();
    Expr idx = simplify(widen.mutate(st->indices[0]), ranges_);
    auto* r = idx.as<RampNode>();
    auto* stride = r ? as_const_int(r->stride) : nullptr;
    if (!stride || *stride == 0) throw NotVectorizable();
    Expr value = simplify(widen.mutate(st->value), ranges_);
    if (value.type().is_scalar()) value = broadcast(value, lanes);
    return buffer_store(st->buffer, value, {idx});
  }

  int max_lanes_;
  RangeMap ranges_;
};

}  // namespace

Stmt vectorize_loops(const Stmt& s, int max_lanes) {
  return s ? LoopVectorizer(max_lanes).mutate(s) : s;
}

}  // namespace tuner::schedule
