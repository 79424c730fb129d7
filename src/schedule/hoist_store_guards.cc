// Guarded stores. A padding stage filled inside a tile (a depthwise conv's input block)
// stores `if_then_else(border tests, x = input[...], y = 0)` per element: each one pays
// its tests and a select of addresses, and LLVM cannot vectorize the copy. The tests are
// linear in the innermost loop's variable, so they hold on one range of it. A long loop (a
// whole padded row) is cut there: y before the range, a plain copy of x in it (vectorized
// by LLVM), y after. A short one (an 8x8 tile's row) gets a plain copy run when the range
// covers the whole loop (every row of an interior tile; 144x56x56 depthwise conv with 8x8
// tiles on AMD Zen 1: 0.31 -> 0.24 ms), else its guarded stores. A body of several guarded
// stores (both column parities of a stride-2 conv's padding, unrolled) is cut where all of
// their tests hold.
#include <algorithm>

#include "schedule/passes.h"
#include "te/bounds.h"
#include "te/functor.h"
#include "te/simplify.h"

namespace tuner::schedule {

using namespace te;

namespace {

// Loops at least this long are cut at their bounds; shorter ones are versioned. A 10-wide
// row (an 8x8 tile's block) cut ran slower than its guarded stores (a 384x14x14 depthwise
// conv 0.074 -> 0.095 ms): three loops of unknown trip counts instead of one unrolled.
constexpr int64_t kMinCutExtent = 16;

// One guarded store `buf[idx] = if_then_else(tests, x, y)` of a loop body.
struct GuardedStore {
  const BufferStoreNode* store;
  const CallNode* value;
};

// The body's stores when it is one guarded store or a sequence of them (a padding fill
// with both column parities unrolled), else empty.
std::vector<GuardedStore> guarded_stores(const Stmt& body) {
  std::vector<Stmt> stmts = {body};
  if (auto* seq = body.as<SeqStmtNode>()) stmts = seq->seq;
  std::vector<GuardedStore> out;
  for (const Stmt& st : stmts) {
    auto* store = st.as<BufferStoreNode>();
    auto* ite = store ? store->value.as<CallNode>() : nullptr;
    if (!ite || ite->op != Intrinsic::IfThenElse || !ite->type.is_scalar()) return {};
    out.push_back({store, ite});
  }
  return out;
}

class StoreGuardHoister : public IRMutator {
 protected:
  Stmt visit_For(const ForNode* op, const Stmt& s) override {
    Stmt r = IRMutator::visit_For(op, s);
    auto* f = r.as<ForNode>();
    if (!f || f->for_kind != ForKind::Serial) return r;
    std::vector<GuardedStore> stores = guarded_stores(f->body);
    if (stores.empty()) return r;
    // Every store's tests hold on [lo, hi) when the tests without v pass.
    const VarNode* v = f->var.get();
    std::vector<Expr> invariants;
    Expr end = f->min + f->extent, lo = f->min, hi = end;
    bool bounds_v = false;
    for (const GuardedStore& g : stores) {
      std::vector<Expr> tests;
      conjuncts(g.value->args[0], tests);
      for (const Expr& c : tests) {
        if (!uses_var(c, v)) {  // the stores share their row tests: each once
          if (!contains_equal(invariants, c)) invariants.push_back(c);
          continue;
        }
        auto b = linear_bound(c, v);
        if (!b) return r;  // a test not linear in v: it may fail inside the loop
        if (b->lower) lo = max(lo, b->bound);
        else hi = min(hi, b->bound);
        bounds_v = true;
      }
    }
    if (!bounds_v) return r;  // loop-invariant tests: LLVM hoists them
    Expr invariant;
    for (const Expr& c : invariants) invariant = invariant ? logical_and(invariant, c) : c;
    // The body with every store's tests passed.
    std::vector<Stmt> plain;
    for (const GuardedStore& g : stores)
      plain.push_back(buffer_store(g.store->buffer, g.value->args[1], g.store->indices));
    lo = simplify(min(lo, end));
    hi = max(hi, lo);
    auto* ext = as_const_int(f->extent);
    if (!ext || *ext < kMinCutExtent) {
      // The range covers the loop: its first iteration passes the lower bounds, its last
      // one the upper bounds.
      Expr whole = logical_and(lo <= f->min, hi >= end);
      if (invariant) whole = logical_and(whole, invariant);
      Stmt copy = make_for(f->var, f->min, f->extent, f->for_kind, seq(plain));
      return if_then_else_stmt(simplify(whole), copy, r);
    }
    // Cut at the bounds: outside them the else-value y of a single store, or the guarded
    // stores of several (their ranges differ), the plain copies inside.
    Stmt outside = stores.size() == 1
                       ? buffer_store(stores[0].store->buffer, stores[0].value->args[2],
                                      stores[0].store->indices)
                       : f->body;
    auto part = [&](const Expr& from, const Expr& to, const Stmt& body) {
      Var w(f->var.name(), f->var.type());
      return make_for(w, from, simplify(to - from), ForKind::Serial, substitute(body, {{v, w}}));
    };
    if (invariant) hi = select(invariant, hi, lo);
    hi = simplify(hi);
    return seq({part(f->min, lo, outside), part(lo, hi, seq(plain)), part(hi, end, outside)});
  }
};

}  // namespace

Stmt hoist_store_guards(const Stmt& s) { return s ? StoreGuardHoister().mutate(s) : s; }

}  // namespace tuner::schedule
