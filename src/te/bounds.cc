#include "te/bounds.h"

#include <algorithm>

#include "support/error.h"
#include "te/functor.h"
#include "te/tensor.h"

namespace tuner::te {

namespace {

using I = IntBound;

int64_t sat_add(int64_t a, int64_t b) {
  if (a == I::kNegInf || b == I::kNegInf) return I::kNegInf;
  if (a == I::kPosInf || b == I::kPosInf) return I::kPosInf;
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return a > 0 ? I::kPosInf : I::kNegInf;
  return r;
}

int64_t sat_mul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  bool neg = (a < 0) != (b < 0);
  bool inf = a == I::kNegInf || a == I::kPosInf || b == I::kNegInf || b == I::kPosInf;
  int64_t r;
  if (inf || __builtin_mul_overflow(a, b, &r)) return neg ? I::kNegInf : I::kPosInf;
  return r;
}

int64_t neg(int64_t a) {
  if (a == I::kNegInf) return I::kPosInf;
  if (a == I::kPosInf) return I::kNegInf;
  return -a;
}

int64_t floordiv_c(int64_t a, int64_t c) {
  if (a == I::kNegInf || a == I::kPosInf) return c > 0 ? a : neg(a);
  int64_t q = a / c;
  if ((a % c != 0) && ((a < 0) != (c < 0))) --q;
  return q;
}

class BoundAnalyzer : public ExprFunctor<IntBound(const Expr&)> {
 public:
  explicit BoundAnalyzer(const RangeMap& r) : ranges_(r) {}

 protected:
  I visit_default(const Expr&) override { return I::everything(); }
  I visit_IntImm(const IntImmNode* op, const Expr&) override { return I::point(op->value); }
  I visit_Var(const VarNode* op, const Expr&) override {
    auto it = ranges_.find(op);
    return it == ranges_.end() ? I::everything() : it->second;
  }
  I visit_Add(const AddNode* op, const Expr&) override {
    I a = dispatch(op->a), b = dispatch(op->b);
    return {sat_add(a.lo, b.lo), sat_add(a.hi, b.hi)};
  }
  I visit_Sub(const SubNode* op, const Expr&) override {
    I a = dispatch(op->a), b = dispatch(op->b);
    return {sat_add(a.lo, neg(b.hi)), sat_add(a.hi, neg(b.lo))};
  }
  I visit_Mul(const MulNode* op, const Expr&) override {
    I a = dispatch(op->a), b = dispatch(op->b);
    int64_t c[4] = {sat_mul(a.lo, b.lo), sat_mul(a.lo, b.hi), sat_mul(a.hi, b.lo),
                    sat_mul(a.hi, b.hi)};
    return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
  }
  I visit_FloorDiv(const FloorDivNode* op, const Expr&) override {
    I a = dispatch(op->a), b = dispatch(op->b);
    if (!b.is_point() || b.lo == 0) return I::everything();
    int64_t c = b.lo;
    int64_t x = floordiv_c(a.lo, c), y = floordiv_c(a.hi, c);
    return {std::min(x, y), std::max(x, y)};
  }
  I visit_FloorMod(const FloorModNode* op, const Expr&) override {
    I a = dispatch(op->a), b = dispatch(op->b);
    if (!b.is_point() || b.lo <= 0) return I::everything();
    int64_t c = b.lo;
    if (a.bounded() && floordiv_c(a.lo, c) == floordiv_c(a.hi, c)) {
      int64_t base = floordiv_c(a.lo, c) * c;
      return {a.lo - base, a.hi - base};
    }
    return {0, c - 1};
  }
  I visit_Min(const MinNode* op, const Expr&) override {
    I a = dispatch(op->a), b = dispatch(op->b);
    return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
  }
  I visit_Max(const MaxNode* op, const Expr&) override {
    I a = dispatch(op->a), b = dispatch(op->b);
    return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
  }
  I visit_Select(const SelectNode* op, const Expr&) override {
    I a = dispatch(op->t), b = dispatch(op->f);
    return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
  }
  I visit_Call(const CallNode* op, const Expr&) override {
    if (op->op != Intrinsic::IfThenElse) return I::everything();
    I a = dispatch(op->args[1]), b = dispatch(op->args[2]);
    return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
  }
  I visit_Cast(const CastNode* op, const Expr&) override {
    if (!op->type.is_integer() || !op->value.type().is_integer()) return I::everything();
    I a = dispatch(op->value);
    if (op->type.bits >= op->value.type().bits && op->type.is_int()) return a;
    return I::everything();
  }
  I visit_Ramp(const RampNode* op, const Expr&) override {
    I b = dispatch(op->base), s = dispatch(op->stride);
    I last = {sat_add(b.lo, sat_mul(s.lo, op->lanes - 1)), sat_add(b.hi, sat_mul(s.hi, op->lanes - 1))};
    return {std::min(b.lo, last.lo), std::max(b.hi, last.hi)};
  }
  I visit_Broadcast(const BroadcastNode* op, const Expr&) override { return dispatch(op->value); }

 private:
  const RangeMap& ranges_;
};

}  // namespace

IntBound loop_var_range(const ForNode* loop, const RangeMap& ranges) {
  IntBound mb = const_int_bound(loop->min, ranges);
  auto* ext = as_const_int(loop->extent);
  return {mb.lo, (mb.hi == IntBound::kPosInf || !ext) ? IntBound::kPosInf : mb.hi + *ext - 1};
}

IntBound const_int_bound(const Expr& e, const RangeMap& ranges) {
  if (!e.type().is_integer()) return IntBound::everything();
  return BoundAnalyzer(ranges)(e);
}

bool contains_equal(const std::vector<Expr>& v, const Expr& e) {
  return std::any_of(v.begin(), v.end(), [&](const Expr& x) { return deep_equal(x, e); });
}

bool deep_equal(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return true;
  if (!a || !b || a.kind() != b.kind() || a.type() != b.type()) return false;
  auto all_equal = [](const std::vector<Expr>& x, const std::vector<Expr>& y) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!deep_equal(x[i], y[i])) return false;
    return true;
  };
  switch (a.kind()) {
    case NodeKind::IntImm: return a.as<IntImmNode>()->value == b.as<IntImmNode>()->value;
    case NodeKind::FloatImm: return a.as<FloatImmNode>()->value == b.as<FloatImmNode>()->value;
    case NodeKind::Var: return false;  // identity only, checked above
#define TUNER_BINARY(T, op)                                                       \
  case NodeKind::T: {                                                             \
    auto *x = static_cast<const T##Node*>(a.get()), *y = static_cast<const T##Node*>(b.get()); \
    return deep_equal(x->a, y->a) && deep_equal(x->b, y->b);                      \
  }
#include "te/IRNodes.def"
    case NodeKind::Not: return deep_equal(a.as<NotNode>()->a, b.as<NotNode>()->a);
    case NodeKind::Select: {
      auto *x = a.as<SelectNode>(), *y = b.as<SelectNode>();
      return deep_equal(x->cond, y->cond) && deep_equal(x->t, y->t) && deep_equal(x->f, y->f);
    }
    case NodeKind::Cast: return deep_equal(a.as<CastNode>()->value, b.as<CastNode>()->value);
    case NodeKind::Call: {
      auto *x = a.as<CallNode>(), *y = b.as<CallNode>();
      return x->op == y->op && all_equal(x->args, y->args);
    }
    case NodeKind::Ramp: {
      auto *x = a.as<RampNode>(), *y = b.as<RampNode>();
      return x->lanes == y->lanes && deep_equal(x->base, y->base) && deep_equal(x->stride, y->stride);
    }
    case NodeKind::Broadcast: {
      auto *x = a.as<BroadcastNode>(), *y = b.as<BroadcastNode>();
      return x->lanes == y->lanes && deep_equal(x->value, y->value);
    }
    case NodeKind::TensorRead: {
      auto *x = a.as<TensorReadNode>(), *y = b.as<TensorReadNode>();
      return x->tensor == y->tensor && all_equal(x->indices, y->indices);
    }
    case NodeKind::BufferLoad: {
      auto *x = a.as<BufferLoadNode>(), *y = b.as<BufferLoadNode>();
      return x->buffer == y->buffer && all_equal(x->indices, y->indices);
    }
    default: return false;
  }
}

void LinearForm::add(const Expr& atom, int64_t coef) {
  if (coef == 0) return;
  for (auto& [a, c] : terms) {
    if (deep_equal(a, atom)) {
      c += coef;
      return;
    }
  }
  terms.emplace_back(atom, coef);
}

Expr LinearForm::to_expr(DataType t) const {
  Expr e;
  for (auto& [atom, c] : terms) {
    if (c == 0) continue;
    if (!e) {
      e = c == 1 ? atom : (c == -1 ? make_binary(NodeKind::Sub, make_int(0, t), atom)
                                   : make_binary(NodeKind::Mul, atom, make_int(c, t)));
    } else if (c > 0) {
      e = make_binary(NodeKind::Add, e, c == 1 ? atom : make_binary(NodeKind::Mul, atom, make_int(c, t)));
    } else {
      e = make_binary(NodeKind::Sub, e,
                      c == -1 ? atom : make_binary(NodeKind::Mul, atom, make_int(-c, t)));
    }
  }
  if (!e) return make_int(constant, t);
  if (constant > 0) return make_binary(NodeKind::Add, e, make_int(constant, t));
  if (constant < 0) return make_binary(NodeKind::Sub, e, make_int(-constant, t));
  return e;
}

namespace {
void linear_rec(const Expr& e, int64_t scale, LinearForm& out) {
  if (auto* i = e.as<IntImmNode>()) {
    out.constant += scale * i->value;
  } else if (auto* a = e.as<AddNode>()) {
    linear_rec(a->a, scale, out);
    linear_rec(a->b, scale, out);
  } else if (auto* s = e.as<SubNode>()) {
    linear_rec(s->a, scale, out);
    linear_rec(s->b, -scale, out);
  } else if (auto* m = e.as<MulNode>()) {
    if (auto* c = m->b.as<IntImmNode>()) linear_rec(m->a, scale * c->value, out);
    else if (auto* c2 = m->a.as<IntImmNode>()) linear_rec(m->b, scale * c2->value, out);
    else out.add(e, scale);
  } else {
    out.add(e, scale);
  }
}
}  // namespace

LinearForm to_linear(const Expr& e) {
  INTERNAL_CHECK(e.type().is_integer() && e.type().is_scalar()) << "linear form of " << e.type().str();
  LinearForm f;
  linear_rec(e, 1, f);
  return f;
}

std::optional<NonNegativeTest> nonnegative_form(const Expr& c) {
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
  return NonNegativeTest{std::move(e), a.type()};
}

std::optional<VarBound> linear_bound(const Expr& c, const VarNode* v) {
  std::optional<NonNegativeTest> test = nonnegative_form(c);
  if (!test) return std::nullopt;
  const LinearForm* e = &test->form;
  int64_t coef = 0;
  LinearForm rest;
  rest.constant = e->constant;
  for (auto& [atom, k] : e->terms) {
    if (atom.get() == v) coef += k;
    else if (uses_var(atom, v)) return std::nullopt;  // v inside a division or product
    else rest.add(atom, k);
  }
  if (coef == 0) return std::nullopt;
  DataType t = test->type;
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

}  // namespace tuner::te
