// Guarded stores. A padding stage filled inside a tile (a depthwise conv's input block)
// stores `if_then_else(border tests, x = input[...], y = 0)` per element: each one pays
// its tests and a select of addresses, and LLVM cannot vectorize the copy. The tests are
// linear in the innermost loop's variable, so they hold on one range of it. A long loop (a
// whole padded row) is cut there: y before the range, a plain copy of x in it (vectorized
// by LLVM), y after. A short one (an 8x8 tile's row) gets a plain copy run when the range
// covers the whole loop (every row of an interior tile; 144x56x56 depthwise conv with 8x8
// tiles on AMD Zen 1: 0.31 -> 0.24 ms), else its guarded stores.
#include <optional>

#include "schedule/passes.h"
#include "te/bounds.h"
#include "te/functor.h"
#include "te/simplify.h"

namespace tuner::schedule {

using namespace te;

namespace {

// A test on v as a bound: v >= bound (lower) or v < bound.
struct VarBound {
  bool lower;
  Expr bound;
};

// The bound on v a comparison of integers sets, when it is linear in v.
std::optional<VarBound> bound_of(const Expr& c, const VarNode* v) {
  Expr a, b;
  int64_t shift = 0;  // the test is a - b - shift >= 0
  if (auto* n = c.as<GENode>()) a = n->a, b = n->b;
  else if (auto* n = c.as<GTNode>()) a = n->a, b = n->b, shift = 1;
  else if (auto* n = c.as<LENode>()) a = n->b, b = n->a;
  else if (auto* n = c.as<LTNode>()) a = n->b, b = n->a, shift = 1;
  else return std::nullopt;
  if (!a.type().is_integer() || !a.type().is_scalar()) return std::nullopt;
  LinearForm e = to_linear(a);
  LinearForm lb = to_linear(b);
  for (auto& [atom, k] : lb.terms) e.add(atom, -k);
  e.constant -= lb.constant + shift;
  int64_t coef = 0;
  LinearForm rest;
  rest.constant = e.constant;
  for (auto& [atom, k] : e.terms) {
    if (atom.get() == v) coef += k;
    else if (uses_var(atom, v)) return std::nullopt;  // v inside a division or product
    else rest.add(atom, k);
  }
  if (coef == 0) return std::nullopt;
  DataType t = a.type();
  Expr r = rest.to_expr(t);
  // coef * v + r >= 0: v >= ceil(-r / coef) for coef > 0, v <= floor(r / -coef) otherwise.
  if (coef > 0) return VarBound{true, floordiv(make_int(coef - 1, t) - r, make_int(coef, t))};
  return VarBound{false, floordiv(r, make_int(-coef, t)) + make_int(1, t)};
}

void conjuncts(const Expr& c, std::vector<Expr>& out) {
  if (auto* a = c.as<AndNode>()) {
    conjuncts(a->a, out);
    conjuncts(a->b, out);
  } else {
    out.push_back(c);
  }
}

// Loops at least this long are cut at their bounds; shorter ones are versioned. A 10-wide
// row (an 8x8 tile's block) cut ran slower than its guarded stores (a 384x14x14 depthwise
// conv 0.074 -> 0.095 ms): three loops of unknown trip counts instead of one unrolled.
constexpr int64_t kMinCutExtent = 16;

class StoreGuardHoister : public IRMutator {
 protected:
  Stmt visit_For(const ForNode* op, const Stmt& s) override {
    Stmt r = IRMutator::visit_For(op, s);
    auto* f = r.as<ForNode>();
    if (!f || f->for_kind != ForKind::Serial) return r;
    auto* store = f->body.as<BufferStoreNode>();
    auto* ite = store ? store->value.as<CallNode>() : nullptr;
    if (!ite || ite->op != Intrinsic::IfThenElse || !ite->type.is_scalar()) return r;
    // The tests hold on [lo, hi): over the whole loop when its first iteration passes the
    // lower bounds, its last one the upper bounds, and the tests without v pass.
    const VarNode* v = f->var.get();
    std::vector<Expr> tests;
    conjuncts(ite->args[0], tests);
    Expr whole, invariant;
    Expr end = f->min + f->extent, lo = f->min, hi = end;
    bool bounds_v = false;
    for (const Expr& c : tests) {
      Expr w = c;
      if (uses_var(c, v)) {
        auto b = bound_of(c, v);
        if (!b) return r;  // a test not linear in v: it may fail inside the loop
        w = b->lower ? b->bound <= f->min : b->bound >= end;
        if (b->lower) lo = max(lo, b->bound);
        else hi = min(hi, b->bound);
        bounds_v = true;
      } else {
        invariant = invariant ? logical_and(invariant, c) : c;
      }
      whole = whole ? logical_and(whole, w) : w;
    }
    if (!bounds_v) return r;  // loop-invariant tests: LLVM hoists them
    auto* ext = as_const_int(f->extent);
    if (!ext || *ext < kMinCutExtent) {
      Stmt copy = make_for(f->var, f->min, f->extent, f->for_kind,
                           buffer_store(store->buffer, ite->args[1], store->indices));
      return if_then_else_stmt(simplify(whole), copy, r);
    }
    // A long loop (a whole padded row) is cut at the bounds instead: y before, x, y after.
    lo = simplify(min(lo, end));
    hi = max(hi, lo);
    if (invariant) hi = select(invariant, hi, lo);
    hi = simplify(hi);
    auto part = [&](const Expr& from, const Expr& to, const Expr& value) {
      Var w(f->var.name(), f->var.type());
      Stmt body = substitute(buffer_store(store->buffer, value, store->indices), {{v, w}});
      return make_for(w, from, simplify(to - from), ForKind::Serial, body);
    };
    return seq({part(f->min, lo, ite->args[2]), part(lo, hi, ite->args[1]), part(hi, end, ite->args[2])});
  }
};

}  // namespace

Stmt hoist_store_guards(const Stmt& s) { return s ? StoreGuardHoister().mutate(s) : s; }

}  // namespace tuner::schedule
