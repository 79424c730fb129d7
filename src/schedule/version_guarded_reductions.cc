// Versioned reductions. A conv whose padding is inlined reads `if_then_else(border tests,
// in[...], 0)` in its reduction: each such load pays its tests, an address select and a
// blend wherever LLVM cannot hoist them (the unrolled columns of a 7x7 stride-2 stem). Most
// output tiles never touch the border. At the outermost loop of a reduction nest (its stores
// do not depend on the loop), the tests that are linear in the nest's variables hold over
// the whole nest when they hold at the extreme values of those variables: one test per tile
// picks a copy of the nest without them, else the original. ResNet-18's stem alone, Zen 4:
// 2.38 -> 2.28 ms on one thread, 1.19 -> 1.13 on two (bench/RESULTS.md, session 46).
#include <algorithm>
#include <optional>

#include "schedule/passes.h"
#include "te/bounds.h"
#include "te/functor.h"
#include "te/simplify.h"

namespace tuner::schedule {

using namespace te;

namespace {

// The ranges of the loops of a statement, given those around it. A variable of several
// loops (a loop and its cut-off tail, partition_tails) gets the union.
class InnerRanges : public IRVisitor {
 public:
  explicit InnerRanges(const RangeMap& outer) : all_(outer) {}
  RangeMap inner;

 protected:
  void visit_For(const ForNode* op, const Stmt& s) override {
    IntBound b = loop_var_range(op, all_);
    auto [it, fresh] = inner.try_emplace(op->var.get(), b);
    if (!fresh) it->second = {std::min(it->second.lo, b.lo), std::max(it->second.hi, b.hi)};
    all_[op->var.get()] = it->second;
    IRVisitor::visit_For(op, s);
  }

 private:
  RangeMap all_;  // outer and inner
};

// True when `e` reads no memory and cannot trap: the test moves out of the nest, where it
// runs unguarded (`i < n && idx[i] >= 0` must not read idx[n]).
bool is_arithmetic(const Expr& e) {
  bool ok = !has_unsafe_division(e);
  post_order_visit(e, [&](const Expr& x) {
    NodeKind k = x.kind();
    ok = ok && k != NodeKind::BufferLoad && k != NodeKind::TensorRead && k != NodeKind::Call;
  });
  return ok;
}

// The test, free of the variables in `nest`, that `c` holds for all their values: c's
// linear form with each term in them at its minimum. Nullopt when c is not a comparison
// linear in them (a term mixing them with other variables, or unbounded).
std::optional<Expr> test_over_nest(const Expr& c, const RangeMap& nest) {
  std::optional<NonNegativeTest> t = nonnegative_form(c);
  // Unsigned forms are out: `form >= 0` would always hold.
  if (!t || !t->type.is_int() || !is_arithmetic(c)) return std::nullopt;
  LinearForm rest;
  rest.constant = t->form.constant;
  for (const auto& [atom, k] : t->form.terms) {
    bool inner = false, outer = false;
    post_order_visit(atom, [&](const Expr& e) {
      if (auto* v = e.as<VarNode>()) (nest.count(v) ? inner : outer) = true;
    });
    if (!inner) {
      rest.add(atom, k);
      continue;
    }
    if (outer) return std::nullopt;
    IntBound b = const_int_bound(atom, nest);
    if (!b.bounded()) return std::nullopt;
    rest.constant += k > 0 ? k * b.lo : k * b.hi;
  }
  return rest.to_expr(t->type) >= make_int(0, t->type);
}

// Drops the conjuncts of if_then_else conditions whose test over the nest is in `passed`.
class PassedTestRemover : public IRMutator {
 public:
  PassedTestRemover(const RangeMap& nest, const std::vector<Expr>& passed)
      : nest_(nest), passed_(passed) {}

 protected:
  Expr visit_Call(const CallNode* op, const Expr& e) override {
    Expr r = IRMutator::visit_Call(op, e);
    auto* call = r.as<CallNode>();
    if (!call || call->op != Intrinsic::IfThenElse) return r;
    std::vector<Expr> tests;
    conjuncts(call->args[0], tests);
    Expr left;
    for (const Expr& c : tests) {
      std::optional<Expr> t = test_over_nest(c, nest_);
      if (!t || !contains_equal(passed_, simplify(*t))) left = left ? logical_and(left, c) : c;
    }
    if (!left) return call->args[1];
    return if_then_else(left, call->args[1], call->args[2]);
  }

 private:
  const RangeMap& nest_;
  const std::vector<Expr>& passed_;
};

// Whether a statement holds stores and none of their indices uses `v`.
class StoresIndependentOf : public IRVisitor {
 public:
  explicit StoresIndependentOf(const VarNode* v) : v_(v) {}
  bool stores = false, indexed = false;

 protected:
  void visit_BufferStore(const BufferStoreNode* op, const Stmt&) override {
    stores = true;
    for (const Expr& i : op->indices) indexed = indexed || uses_var(i, v_);
  }

 private:
  const VarNode* v_;
};

// True when `loop` holds stores and none of their indices uses its variable.
bool is_reduction_loop(const ForNode* loop) {
  StoresIndependentOf s(loop->var.get());
  s.visit(loop->body);
  return s.stores && !s.indexed;
}

class ReductionVersioner : public IRMutator {
 protected:
  Stmt visit_For(const ForNode* op, const Stmt& s) override {
    if (op->for_kind != ForKind::Parallel && is_reduction_loop(op))
      if (Stmt v = version(op, s)) return v;
    ranges_[op->var.get()] = loop_var_range(op, ranges_);
    outer_.push_back(op->var.get());
    Stmt r = IRMutator::visit_For(op, s);
    outer_.pop_back();
    ranges_.erase(op->var.get());
    return r;
  }

 private:
  // `if (tests hold over the nest) nest without them else nest`, or null when no test of a
  // guarded load in the nest is linear in its variables or they never all hold.
  Stmt version(const ForNode* op, const Stmt& s) {
    InnerRanges ir(ranges_);
    ir.visit(s);
    const RangeMap& nest = ir.inner;
    std::vector<Expr> tests;
    visit_exprs(op->body, [&](const Expr& e) {
      auto* call = e.as<CallNode>();
      if (!call || call->op != Intrinsic::IfThenElse) return;
      std::vector<Expr> cs;
      conjuncts(call->args[0], cs);
      for (const Expr& c : cs)
        if (std::optional<Expr> t = test_over_nest(c, nest)) {
          Expr simple = simplify(*t);
          if (!contains_equal(tests, simple)) tests.push_back(simple);
        }
    });
    drop_infeasible(tests);
    if (tests.empty()) return Stmt();
    Expr all;
    for (const Expr& t : tests) all = all ? logical_and(all, t) : t;
    all = simplify(all, ranges_);
    const int64_t* known = as_const_int(all);
    if (known && *known == 0) return Stmt();
    Stmt plain = PassedTestRemover(nest, tests).mutate(s);
    if (known) return plain;
    return if_then_else_stmt(all, plain, s);
  }

  // Drops the tests on an enclosing loop's variable that no value of it passes together (a
  // 14-wide row in two 7-wide tiles: each touches a border). The copy then goes without the
  // other tests (the rows'), and the loads next to a border keep their column test.
  void drop_infeasible(std::vector<Expr>& tests) const {
    std::erase_if(tests, [&](const Expr& t) {  // and those that never hold at all
      return const_int_value(simplify(t, ranges_)) == 0;
    });
    for (const VarNode* v : outer_) {
      const IntBound& range = ranges_.at(v);
      if (!range.bounded() || range.hi - range.lo >= kMaxEnumerated) continue;
      Expr on_v;
      for (const Expr& t : tests)
        if (uses_var(t, v)) on_v = on_v ? logical_and(on_v, t) : t;
      if (!on_v) continue;
      bool feasible = false;
      for (int64_t x = range.lo; x <= range.hi && !feasible; ++x) {
        feasible = const_int_value(simplify(substitute(on_v, {{v, make_int(x, v->type)}}), ranges_)) != 0;
      }
      if (!feasible) std::erase_if(tests, [&](const Expr& t) { return uses_var(t, v); });
    }
  }

  // Enclosing loops up to this long are checked value by value.
  static constexpr int64_t kMaxEnumerated = 64;

  RangeMap ranges_;                   // of the loops around the visited one
  std::vector<const VarNode*> outer_;  // those loops' variables, outermost first
};

}  // namespace

Stmt version_guarded_reductions(const Stmt& s) { return s ? ReductionVersioner().mutate(s) : s; }

}  // namespace tuner::schedule
