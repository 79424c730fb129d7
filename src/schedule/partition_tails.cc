// Tail partitioning. A split that does not divide its axis (56 = 4 x 16, the last block 8
// wide) leaves a guard `outer * 16 + inner < 56` around the body of the inner loop. A guard
// that depends on the lanes keeps a vectorized loop serial, so such a loop ran scalar.
// The guards hold in every iteration of the outer loop but the last: the outer loop is cut
// into those iterations, where the guards fold away, and its last one, where each guard
// becomes the inner loop's shorter extent. Both parts then vectorize: 3 x 16 lanes + 8.
// A parallel loop is not cut (its last iteration would run alone after the others): its
// body becomes `if (v < last) main else last-body`. A fused loop whose guards test `v % k`
// (the uneven split varies fastest in it) picks its body by `v % k < k - 1` the same way.
#include <optional>

#include "schedule/passes.h"
#include "te/bounds.h"
#include "te/functor.h"
#include "te/simplify.h"

namespace tuner::schedule {

using namespace te;

namespace {

// Whether a guard (if-statement) inside a vectorized loop of the tree tests `v`.
class VectorGuardFinder : public IRVisitor {
 public:
  explicit VectorGuardFinder(const VarNode* v) : v_(v) {}
  bool found = false;

 protected:
  void visit_For(const ForNode* op, const Stmt& s) override {
    int vec = op->for_kind == ForKind::Vectorized;
    vector_loops_ += vec;
    IRVisitor::visit_For(op, s);
    vector_loops_ -= vec;
  }
  void visit_IfThenElse(const IfThenElseNode* op, const Stmt& s) override {
    if (vector_loops_ > 0 && uses_var(op->cond, v_)) {
      found = true;
      post_order_visit(op->cond, [&](const Expr& e) {
        auto* m = e.as<FloorModNode>();
        auto* k = m && m->a.get() == v_ ? as_const_int(m->b) : nullptr;
        if (k) modulus = modulus == 0 || modulus == *k ? *k : -1;
      });
    }
    IRVisitor::visit_IfThenElse(op, s);
  }

 public:
  // k when every `v % k` in the guards has the same k (a fused loop whose fastest-varying
  // part was split unevenly), 0 when there is none, -1 when they differ.
  int64_t modulus = 0;

 private:
  const VarNode* v_;
  int vector_loops_ = 0;
};

bool guards_use(const Stmt& s, const VarNode* v) {
  if (!s) return false;
  VectorGuardFinder f(v);
  f.visit(s);
  return f.found;
}

int64_t guard_modulus(const Stmt& s, const VarNode* v) {
  VectorGuardFinder f(v);
  f.visit(s);
  return f.modulus;
}

// Replaces `v % k` with `w`.
class ModReplacer : public IRMutator {
 public:
  ModReplacer(const VarNode* v, int64_t k, Var w) : v_(v), k_(k), w_(std::move(w)) {}

 protected:
  Expr visit_FloorMod(const FloorModNode* op, const Expr& e) override {
    auto* k = as_const_int(op->b);
    if (op->a.get() == v_ && k && *k == k_) return w_;
    return IRMutator::visit_FloorMod(op, e);
  }

 private:
  const VarNode* v_;
  int64_t k_;
  Var w_;
};

// The constant exclusive upper bound a guard sets on v (`v + c < k`: k - c), if any.
std::optional<int64_t> upper_bound_of(const Expr& cond, const VarNode* v) {
  auto b = linear_bound(cond, v);
  if (!b || b->lower) return std::nullopt;
  return const_int_value(simplify(b->bound));
}

// A loop whose whole body is `if (v < k && rest) S` runs over [min, k) with `if (rest) S`.
class GuardTrimmer : public IRMutator {
 protected:
  Stmt visit_For(const ForNode* op, const Stmt& s) override {
    Stmt r = IRMutator::visit_For(op, s);
    auto* f = r.as<ForNode>();
    auto* i = f ? f->body.as<IfThenElseNode>() : nullptr;
    auto* mn = f ? as_const_int(f->min) : nullptr;
    auto* ext = f ? as_const_int(f->extent) : nullptr;
    if (!i || i->else_case || !mn || !ext) return r;
    std::vector<Expr> tests, rest;
    std::optional<int64_t> hi;
    conjuncts(i->cond, tests);
    for (const Expr& c : tests) {
      if (auto k = upper_bound_of(c, f->var.get())) hi = hi ? std::min(*hi, *k) : *k;
      else rest.push_back(c);
    }
    if (!hi) return r;
    int64_t n = std::min(*ext, *hi - *mn);
    if (n <= 0) return Stmt();
    Stmt body = i->then_case;
    if (!rest.empty()) {
      Expr c = rest[0];
      for (size_t k = 1; k < rest.size(); ++k) c = logical_and(c, rest[k]);
      body = if_then_else_stmt(c, body);
    }
    return make_for(f->var, f->min, make_int(n, f->extent.type()), f->for_kind, body);
  }
};

class TailPartitioner : public IRMutator {
 protected:
  Stmt visit_For(const ForNode* op, const Stmt& s) override {
    auto* ext = as_const_int(op->extent);
    ranges_[op->var.get()] = loop_var_range(op, ranges_);
    Stmt body = mutate(op->body);
    auto* mn = as_const_int(op->min);
    bool parallel = op->for_kind == ForKind::Parallel;
    bool candidate = (op->for_kind == ForKind::Serial || op->for_kind == ForKind::Unrolled || parallel) &&
                     mn && ext && *ext >= 2 && guards_use(body, op->var.get());
    Stmt out;
    bool decided = false;
    if (candidate) {
      ranges_[op->var.get()] = {*mn, *mn + *ext - 2};
      Stmt main = simplify(body, ranges_);
      if (!guards_use(main, op->var.get())) {
        ranges_[op->var.get()] = {*mn + *ext - 1, *mn + *ext - 1};
        Stmt last = substitute(body, {{op->var.get(), make_int(*mn + *ext - 1, op->var.type())}});
        last = simplify(last, ranges_);  // empty when the last iteration does nothing
        if (last) last = GuardTrimmer().mutate(last);
        if (parallel) {
          // Cut, the last iteration would run after the others on one thread: the loop keeps
          // its iterations and picks the body by its variable instead.
          ranges_.erase(op->var.get());
          return pick_body(op, op->var < make_int(*mn + *ext - 1, op->var.type()), main, last);
        }
        std::vector<Stmt> parts;
        if (main)
          parts.push_back(make_for(op->var, op->min, make_int(*ext - 1, op->extent.type()),
                                   op->for_kind, main));
        if (last) parts.push_back(last);
        out = parts.empty() ? Stmt() : seq(std::move(parts));
        decided = true;  // `out`, possibly empty, replaces the loop
      }
    }
    if (candidate && !decided) {
      ranges_[op->var.get()] = loop_var_range(op, ranges_);
      if (auto cut = partition_by_modulus(op, body)) {
        out = *cut;
        decided = true;
      }
    }
    ranges_.erase(op->var.get());
    if (out || decided) return out;
    return body.same_as(op->body) ? s : make_for(op->var, op->min, op->extent, op->for_kind, body);
  }

 private:
  // A fused loop v whose guards test `v % k` (its last part, split unevenly, varies
  // fastest): the body is picked by `v % k < k - 1`, the guards folded in the first body and
  // trimmed in the second.
  std::optional<Stmt> partition_by_modulus(const ForNode* op, const Stmt& body) {
    const VarNode* v = op->var.get();
    int64_t k = guard_modulus(body, v);
    if (k < 2) return std::nullopt;
    Var w(op->var->name + ".tail", op->var.type());
    Stmt body_w = ModReplacer(v, k, w).mutate(body);
    if (guards_use(body_w, v)) return std::nullopt;  // guards on v other than through v % k
    ranges_[w.get()] = {0, k - 2};
    Stmt main = simplify(body_w, ranges_);
    bool folded = !guards_use(main, w.get());
    ranges_[w.get()] = {k - 1, k - 1};
    Stmt last = folded ? simplify(substitute(body_w, {{w.get(), make_int(k - 1, w.type())}}), ranges_) : Stmt();
    ranges_.erase(w.get());
    if (!folded) return std::nullopt;
    if (last) last = GuardTrimmer().mutate(last);
    Expr mod = floormod(op->var, make_int(k, op->var.type()));
    if (main) main = substitute(main, {{w.get(), mod}});
    return pick_body(op, mod < make_int(k - 1, op->var.type()), main, last);
  }

  // The loop `op` over `if (not_last) main else last` (either may be empty: nothing to do).
  static Stmt pick_body(const ForNode* op, const Expr& not_last, const Stmt& main, const Stmt& last) {
    Stmt pick = main && last ? if_then_else_stmt(not_last, main, last)
                : main       ? if_then_else_stmt(not_last, main)
                : last       ? if_then_else_stmt(logical_not(not_last), last)
                             : Stmt();
    return pick ? make_for(op->var, op->min, op->extent, op->for_kind, pick) : Stmt();
  }

  RangeMap ranges_;
};

}  // namespace

Stmt partition_tails(const Stmt& s) { return s ? TailPartitioner().mutate(s) : s; }

}  // namespace tuner::schedule
