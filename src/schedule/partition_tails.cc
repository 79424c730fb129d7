// Tail partitioning. A split that does not divide its axis (56 = 4 x 16, the last block 8
// wide) leaves a guard `outer * 16 + inner < 56` around the body of the inner loop. A guard
// that depends on the lanes keeps a vectorized loop serial, so such a loop ran scalar.
// The guards hold in every iteration of the outer loop but the last: the outer loop is cut
// into those iterations, where the guards fold away, and its last one, where each guard
// becomes the inner loop's shorter extent. Both parts then vectorize: 3 x 16 lanes + 8.
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
    found = found || (vector_loops_ > 0 && uses_var(op->cond, v_));
    IRVisitor::visit_IfThenElse(op, s);
  }

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

// The constant c when `e` is `v + c` (or `v`).
std::optional<int64_t> offset_from(const Expr& e, const VarNode* v) {
  if (e.get() == v) return 0;
  if (auto* a = e.as<AddNode>()) {
    if (auto* k = as_const_int(a->b); k && a->a.get() == v) return *k;
    if (auto* k = as_const_int(a->a); k && a->b.get() == v) return *k;
  }
  return std::nullopt;
}

// k - c when the guard is `v + c < k` (or `<= k - 1`) with constants: v's exclusive bound.
std::optional<int64_t> upper_bound_of(const Expr& cond, const VarNode* v) {
  if (auto* lt = cond.as<LTNode>())
    if (auto c = offset_from(lt->a, v))
      if (auto* k = as_const_int(lt->b)) return *k - *c;
  if (auto* le = cond.as<LENode>())
    if (auto c = offset_from(le->a, v))
      if (auto* k = as_const_int(le->b)) return *k + 1 - *c;
  return std::nullopt;
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
    std::vector<Expr> rest;
    std::optional<int64_t> hi;
    std::vector<Expr> todo{i->cond};
    while (!todo.empty()) {
      Expr c = todo.back();
      todo.pop_back();
      if (auto* a = c.as<AndNode>()) {
        todo.push_back(a->a);
        todo.push_back(a->b);
      } else if (auto k = upper_bound_of(c, f->var.get())) {
        hi = hi ? std::min(*hi, *k) : *k;
      } else {
        rest.push_back(c);
      }
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
    bool candidate = (op->for_kind == ForKind::Serial || op->for_kind == ForKind::Unrolled) &&
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
        std::vector<Stmt> parts;
        if (main)
          parts.push_back(make_for(op->var, op->min, make_int(*ext - 1, op->extent.type()),
                                   op->for_kind, main));
        if (last) parts.push_back(last);
        out = parts.empty() ? Stmt() : seq(std::move(parts));
        decided = true;  // `out`, possibly empty, replaces the loop
      }
    }
    ranges_.erase(op->var.get());
    if (out || decided) return out;
    return body.same_as(op->body) ? s : make_for(op->var, op->min, op->extent, op->for_kind, body);
  }

 private:
  RangeMap ranges_;
};

}  // namespace

Stmt partition_tails(const Stmt& s) { return s ? TailPartitioner().mutate(s) : s; }

}  // namespace tuner::schedule
