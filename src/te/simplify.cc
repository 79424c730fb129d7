#include "te/simplify.h"

#include <cmath>
#include <numeric>

#include "support/error.h"
#include "te/float_minmax.h"
#include "te/functor.h"

namespace tuner::te {

namespace {

bool is_index(const Expr& e) { return e.type() == DataType::i64(); }

int64_t floordiv_i(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t floormod_i(int64_t a, int64_t b) { return a - floordiv_i(a, b) * b; }

const double* as_const_float(const Expr& e) {
  if (auto* f = e.as<FloatImmNode>()) return &f->value;
  return nullptr;
}

class Simplifier : public IRMutator {
 public:
  explicit Simplifier(RangeMap ranges) : ranges_(std::move(ranges)) {}

  using IRMutator::mutate;

 protected:
  IntBound bound(const Expr& e) { return const_int_bound(e, ranges_); }

  // Decides `a - b` against zero: -1 (always < 0), 0 (unknown / may be 0), ...
  // Returns the bound of a - b through its linear form (cancels common terms).
  IntBound diff_bound(const Expr& a, const Expr& b) {
    if (a.type().is_integer() && a.type().is_scalar() && is_index(a)) {
      LinearForm f = to_linear(a);
      LinearForm g = to_linear(b);
      for (auto& [atom, c] : g.terms) f.add(atom, -c);
      f.constant -= g.constant;
      return bound(f.to_expr());
    }
    return bound(make_binary(NodeKind::Sub, a, b));
  }

  Expr canonical_linear(const Expr& e) {
    LinearForm f = to_linear(e);
    if (rejoin_div_mod(f)) return mutate(f.to_expr(e.type()));
    return f.to_expr(e.type());
  }

  // m*c*(x // c) + m*(y % c) = m*x when x - y is a multiple of c: the row-major position of
  // a fused loop's (row, column) pair is the fused index again. Returns whether f changed.
  static bool rejoin_div_mod(LinearForm& f) {
    for (size_t i = 0; i < f.terms.size(); ++i) {
      auto* mod = f.terms[i].first.as<FloorModNode>();
      auto* c = mod ? as_const_int(mod->b) : nullptr;
      if (!c || *c <= 0 || f.terms[i].second == 0) continue;
      int64_t m = f.terms[i].second;
      for (size_t j = 0; j < f.terms.size(); ++j) {
        auto* div = f.terms[j].first.as<FloorDivNode>();
        auto* cd = div ? as_const_int(div->b) : nullptr;
        if (!cd || *cd != *c || f.terms[j].second != m * *c) continue;
        if (!is_index(div->a) || !is_index(mod->a) || !multiple_of(div->a, mod->a, *c)) continue;
        Expr x = div->a;
        f.terms[i].second = 0;
        f.terms[j].second = 0;
        LinearForm fx = to_linear(x);
        for (auto& [atom, k] : fx.terms) f.add(atom, k * m);
        f.constant += fx.constant * m;
        return true;
      }
    }
    return false;
  }

  // Whether a - b is a constant multiple of c (every coefficient and the constant).
  static bool multiple_of(const Expr& a, const Expr& b, int64_t c) {
    LinearForm d = to_linear(a);
    LinearForm g = to_linear(b);
    for (auto& [atom, k] : g.terms) d.add(atom, -k);
    if ((d.constant - g.constant) % c != 0) return false;
    for (auto& [atom, k] : d.terms)
      if (k % c != 0) return false;
    return true;
  }

  Expr visit_Add(const AddNode* op, const Expr& e) override { return arith(NodeKind::Add, op->a, op->b, e); }
  Expr visit_Sub(const SubNode* op, const Expr& e) override { return arith(NodeKind::Sub, op->a, op->b, e); }
  Expr visit_Mul(const MulNode* op, const Expr& e) override { return arith(NodeKind::Mul, op->a, op->b, e); }

  Expr arith(NodeKind k, const Expr& a0, const Expr& b0, const Expr& e) {
    Expr a = mutate(a0), b = mutate(b0);
    // Constant folding.
    auto* ia = as_const_int(a);
    auto* ib = as_const_int(b);
    if (ia && ib && a.type().is_scalar()) {
      int64_t r = k == NodeKind::Add ? *ia + *ib : k == NodeKind::Sub ? *ia - *ib : *ia * *ib;
      return make_int(r, a.type());
    }
    auto* fa = as_const_float(a);
    auto* fb = as_const_float(b);
    if (fa && fb) {
      double r = k == NodeKind::Add ? *fa + *fb : k == NodeKind::Sub ? *fa - *fb : *fa * *fb;
      if (a.type() == DataType::f32()) r = double(float(r));
      return make_float(r, a.type());
    }
    // Vector forms.
    if (a.type().is_vector() || b.type().is_vector()) return vector_arith(k, a, b, e, a0, b0);
    if (is_index(a)) {
      Expr r = make_binary(k, a, b);
      return canonical_linear(r);
    }
    if (a.type().is_float()) {
      if (k == NodeKind::Mul) {
        if (is_const(b, 1)) return a;
        if (is_const(a, 1)) return b;
      }
      if (k == NodeKind::Add) {
        if (is_const(b, 0)) return a;
        if (is_const(a, 0)) return b;
      }
      if (k == NodeKind::Sub && is_const(b, 0)) return a;
    }
    if (a.same_as(a0) && b.same_as(b0)) return e;
    return make_binary(k, a, b);
  }

  Expr vector_arith(NodeKind k, const Expr& a, const Expr& b, const Expr& e, const Expr& a0,
                    const Expr& b0) {
    auto* ra = a.as<RampNode>();
    auto* rb = b.as<RampNode>();
    auto* ba = a.as<BroadcastNode>();
    auto* bb = b.as<BroadcastNode>();
    if (ba && bb) return broadcast(mutate(make_binary(k, ba->value, bb->value)), ba->lanes);
    if (k == NodeKind::Add || k == NodeKind::Sub) {
      if (ra && bb)
        return ramp(mutate(make_binary(k, ra->base, bb->value)), ra->stride, ra->lanes);
      if (ba && rb && k == NodeKind::Add)
        return ramp(mutate(make_binary(k, ba->value, rb->base)), rb->stride, rb->lanes);
      if (ra && rb)
        return ramp(mutate(make_binary(k, ra->base, rb->base)),
                    mutate(make_binary(k, ra->stride, rb->stride)), ra->lanes);
    }
    if (k == NodeKind::Mul) {
      if (ra && bb)
        return ramp(mutate(make_binary(k, ra->base, bb->value)),
                    mutate(make_binary(k, ra->stride, bb->value)), ra->lanes);
      if (ba && rb)
        return ramp(mutate(make_binary(k, rb->base, ba->value)),
                    mutate(make_binary(k, rb->stride, ba->value)), rb->lanes);
    }
    if (a.same_as(a0) && b.same_as(b0)) return e;
    return make_binary(k, a, b);
  }

  // Writes a = c*q + r with r the part of a whose coefficients are not multiples of c.
  // Returns false when c does not split anything out.
  bool split_by(const Expr& a, int64_t c, Expr* q, Expr* r) {
    LinearForm f = to_linear(a), fq, fr;
    for (auto& [atom, coef] : f.terms) {
      if (coef % c == 0) fq.add(atom, coef / c);
      else fr.add(atom, coef);
    }
    fq.constant = floordiv_i(f.constant, c);
    fr.constant = floormod_i(f.constant, c);
    *q = fq.to_expr();
    *r = fr.to_expr();
    return true;
  }

  // Whether all lanes of ramp(base, stride, lanes) fall in one block [k*c, (k+1)*c), so that
  // `// c` is one value and `% c` a ramp; then *base_mod is the simplified base % c. Either the
  // range of base % c leaves room for the lanes, or the base's known divisor does: with
  // g = gcd(c, base's coefficients), base % c is (base's constant % g) plus a multiple of g,
  // so lanes spanning less than g never cross a block (16 lanes at a multiple of 16 over
  // 32-channel weight blocks).
  bool ramp_in_one_block(const RampNode* r, int64_t c, Expr* base_mod) {
    auto* st = as_const_int(r->stride);
    if (c <= 0 || !st || *st < 0) return false;
    int64_t span = *st * (r->lanes - 1);
    *base_mod = mutate(floormod(r->base, make_int(c)));
    IntBound mb = bound(*base_mod);
    if (mb.lo >= 0 && mb.hi + span < c) return true;
    if (!r->base.type().is_integer() || !r->base.type().is_scalar()) return false;
    LinearForm f = to_linear(r->base);
    int64_t g = c;
    for (auto& [atom, coef] : f.terms) g = std::gcd(g, coef < 0 ? -coef : coef);
    return floormod_i(f.constant, g) + span < g;
  }

  Expr visit_FloorDiv(const FloorDivNode* op, const Expr& e) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (auto *ba = a.as<BroadcastNode>(), *bb = b.as<BroadcastNode>(); ba && bb && ba->lanes == bb->lanes)
      return broadcast(mutate(floordiv(ba->value, bb->value)), ba->lanes);
    auto* ia = as_const_int(a);
    auto* ib = as_const_int(b);
    if (ib && *ib == 1) return a;
    if (ia && ib && *ib != 0 && a.type().is_scalar()) return make_int(floordiv_i(*ia, *ib), a.type());
    if (ib && *ib > 0 && is_index(a)) {
      Expr q, r;
      split_by(a, *ib, &q, &r);
      IntBound rb = bound(r);
      if (rb.lo >= 0 && rb.hi < *ib) return q;
      // floordiv(x, c) with x in [0, c) is 0.
      IntBound ab = bound(a);
      if (ab.bounded() && floordiv_i(ab.lo, *ib) == floordiv_i(ab.hi, *ib))
        return make_int(floordiv_i(ab.lo, *ib));
      // Nested: (x // c1) // c2 = x // (c1 * c2) for positive constants.
      if (auto* inner = a.as<FloorDivNode>())
        if (auto* c1 = as_const_int(inner->b); c1 && *c1 > 0)
          return mutate(floordiv(inner->a, make_int(*c1 * *ib)));
    }
    Expr base_mod;
    if (auto* rmp = a.as<RampNode>(); rmp && ib && ramp_in_one_block(rmp, *ib, &base_mod))
      return broadcast(mutate(floordiv(rmp->base, make_int(*ib))), rmp->lanes);
    if (a.same_as(op->a) && b.same_as(op->b)) return e;
    return floordiv(a, b);
  }

  Expr visit_FloorMod(const FloorModNode* op, const Expr& e) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (auto *ba = a.as<BroadcastNode>(), *bb = b.as<BroadcastNode>(); ba && bb && ba->lanes == bb->lanes)
      return broadcast(mutate(floormod(ba->value, bb->value)), ba->lanes);
    auto* ia = as_const_int(a);
    auto* ib = as_const_int(b);
    if (ib && *ib == 1) return make_const(a.type(), 0);
    if (ia && ib && *ib != 0 && a.type().is_scalar()) return make_int(floormod_i(*ia, *ib), a.type());
    if (ib && *ib > 0 && is_index(a)) {
      Expr q, r;
      split_by(a, *ib, &q, &r);
      IntBound rb = bound(r);
      if (rb.lo >= 0 && rb.hi < *ib) return r;
      IntBound ab = bound(a);
      if (ab.lo >= 0 && ab.hi < *ib) return a;
      if (!deep_equal(r, a)) return floormod(r, b);
    }
    Expr base_mod;
    if (auto* rmp = a.as<RampNode>(); rmp && ib && ramp_in_one_block(rmp, *ib, &base_mod))
      return ramp(base_mod, rmp->stride, rmp->lanes);
    if (a.same_as(op->a) && b.same_as(op->b)) return e;
    return floormod(a, b);
  }

  Expr visit_Div(const DivNode* op, const Expr& e) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    auto* fa = as_const_float(a);
    auto* fb = as_const_float(b);
    if (fa && fb) {
      double r = *fa / *fb;
      if (a.type() == DataType::f32()) r = double(float(r));
      return make_float(r, a.type());
    }
    if (is_const(b, 1)) return a;
    if (a.same_as(op->a) && b.same_as(op->b)) return e;
    return a / b;
  }

  Expr minmax(NodeKind k, const Expr& a0, const Expr& b0, const Expr& e) {
    Expr a = mutate(a0), b = mutate(b0);
    bool is_min = k == NodeKind::Min;
    if (a.type().is_integer() && a.type().is_scalar()) {
      IntBound d = diff_bound(a, b);
      if (d.hi != IntBound::kPosInf && d.hi <= 0) return is_min ? a : b;  // a <= b
      if (d.lo != IntBound::kNegInf && d.lo >= 0) return is_min ? b : a;  // a >= b
    }
    auto* fa = as_const_float(a);
    auto* fb = as_const_float(b);
    if (fa && fb) return make_float(is_min ? nan_min(*fa, *fb) : nan_max(*fa, *fb), a.type());
    if (a.same_as(a0) && b.same_as(b0)) return e;
    return make_binary(k, a, b);
  }
  Expr visit_Min(const MinNode* op, const Expr& e) override { return minmax(NodeKind::Min, op->a, op->b, e); }
  Expr visit_Max(const MaxNode* op, const Expr& e) override { return minmax(NodeKind::Max, op->a, op->b, e); }

  Expr compare(NodeKind k, const Expr& a0, const Expr& b0, const Expr& e) {
    Expr a = mutate(a0), b = mutate(b0);
    if (a.type().is_integer() && a.type().is_scalar()) {
      IntBound d = diff_bound(a, b);
      auto known = [&](bool v) { return make_int(v ? 1 : 0, DataType::boolean()); };
      bool lo_ok = d.lo != IntBound::kNegInf, hi_ok = d.hi != IntBound::kPosInf;
      switch (k) {
        case NodeKind::LT:
          if (hi_ok && d.hi < 0) return known(true);
          if (lo_ok && d.lo >= 0) return known(false);
          break;
        case NodeKind::LE:
          if (hi_ok && d.hi <= 0) return known(true);
          if (lo_ok && d.lo > 0) return known(false);
          break;
        case NodeKind::GT:
          if (lo_ok && d.lo > 0) return known(true);
          if (hi_ok && d.hi <= 0) return known(false);
          break;
        case NodeKind::GE:
          if (lo_ok && d.lo >= 0) return known(true);
          if (hi_ok && d.hi < 0) return known(false);
          break;
        case NodeKind::EQ:
          if (d.is_point()) return known(d.lo == 0);
          if ((lo_ok && d.lo > 0) || (hi_ok && d.hi < 0)) return known(false);
          break;
        case NodeKind::NE:
          if (d.is_point()) return known(d.lo != 0);
          if ((lo_ok && d.lo > 0) || (hi_ok && d.hi < 0)) return known(true);
          break;
        default: break;
      }
    }
    // One comparison for all lanes: a choice on it is then uniform (vectorize_loops keeps it
    // a branch).
    auto* ba = a.as<BroadcastNode>();
    auto* bb = b.as<BroadcastNode>();
    if (ba && bb && ba->lanes == bb->lanes) return broadcast(mutate(make_binary(k, ba->value, bb->value)), ba->lanes);
    auto* fa = as_const_float(a);
    auto* fb = as_const_float(b);
    if (fa && fb) {
      bool r = false;
      switch (k) {
        case NodeKind::LT: r = *fa < *fb; break;
        case NodeKind::LE: r = *fa <= *fb; break;
        case NodeKind::GT: r = *fa > *fb; break;
        case NodeKind::GE: r = *fa >= *fb; break;
        case NodeKind::EQ: r = *fa == *fb; break;
        case NodeKind::NE: r = *fa != *fb; break;
        default: break;
      }
      return make_int(r, DataType::boolean());
    }
    if (a.same_as(a0) && b.same_as(b0)) return e;
    return make_binary(k, a, b);
  }
#define CMP(T) \
  Expr visit_##T(const T##Node* op, const Expr& e) override { return compare(NodeKind::T, op->a, op->b, e); }
  CMP(LT) CMP(LE) CMP(GT) CMP(GE) CMP(EQ) CMP(NE)
#undef CMP

  Expr visit_And(const AndNode* op, const Expr& e) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (is_const(a, 0) || is_const(b, 0)) return make_const(a.type(), 0);
    if (is_const(a, 1)) return b;
    if (is_const(b, 1)) return a;
    auto* ba = a.as<BroadcastNode>();
    auto* bb = b.as<BroadcastNode>();
    if (ba && bb && ba->lanes == bb->lanes) return broadcast(mutate(logical_and(ba->value, bb->value)), ba->lanes);
    if (a.same_as(op->a) && b.same_as(op->b)) return e;
    return logical_and(a, b);
  }
  Expr visit_Or(const OrNode* op, const Expr& e) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (is_const(a, 1) || is_const(b, 1)) return make_const(a.type(), 1);
    if (is_const(a, 0)) return b;
    if (is_const(b, 0)) return a;
    auto* ba = a.as<BroadcastNode>();
    auto* bb = b.as<BroadcastNode>();
    if (ba && bb && ba->lanes == bb->lanes) return broadcast(mutate(logical_or(ba->value, bb->value)), ba->lanes);
    if (a.same_as(op->a) && b.same_as(op->b)) return e;
    return logical_or(a, b);
  }
  Expr visit_Not(const NotNode* op, const Expr& e) override {
    Expr a = mutate(op->a);
    if (auto* c = as_const_int(a)) return make_const(a.type(), *c ? 0 : 1);
    if (auto* n = a.as<NotNode>()) return n->a;
    return a.same_as(op->a) ? e : make_not(a);
  }
  Expr visit_Select(const SelectNode* op, const Expr& e) override {
    Expr c = mutate(op->cond);
    if (auto* v = as_const_int(c)) return mutate(*v ? op->t : op->f);
    Expr t = mutate(op->t), f = mutate(op->f);
    if (c.same_as(op->cond) && t.same_as(op->t) && f.same_as(op->f)) return e;
    return select(c, t, f);
  }
  Expr visit_Call(const CallNode* op, const Expr& e) override {
    if (op->op == Intrinsic::IfThenElse) {
      Expr c = mutate(op->args[0]);
      if (auto* v = as_const_int(c)) return mutate(*v ? op->args[1] : op->args[2]);
      Expr t = mutate(op->args[1]), f = mutate(op->args[2]);
      if (c.same_as(op->args[0]) && t.same_as(op->args[1]) && f.same_as(op->args[2])) return e;
      return if_then_else(c, t, f);
    }
    return IRMutator::visit_Call(op, e);
  }
  Expr visit_Cast(const CastNode* op, const Expr& e) override {
    Expr v = mutate(op->value);
    if (op->type.is_scalar()) {
      if (auto* i = v.as<IntImmNode>()) {
        if (op->type.is_float()) return make_float(double(i->value), op->type);
        if (op->type == DataType::i64()) return make_int(i->value, op->type);
      }
    }
    if (v.type() == op->type) return v;
    return v.same_as(op->value) ? e : cast(op->type, v);
  }

  // ---- statements ----------------------------------------------------------------------

  Stmt visit_For(const ForNode* op, const Stmt& s) override {
    Expr mn = mutate(op->min), ext = mutate(op->extent);
    auto* cext = as_const_int(ext);
    if (cext && *cext <= 0) return Stmt();
    if (cext && *cext == 1) {
      VarMap m{{op->var.get(), mn}};
      return mutate(substitute(op->body, m));
    }
    IntBound mb = bound(mn), eb = bound(ext);
    ranges_[op->var.get()] = {mb.lo, (mb.hi == IntBound::kPosInf || eb.hi == IntBound::kPosInf)
                                         ? IntBound::kPosInf : mb.hi + eb.hi - 1};
    Stmt body = mutate(op->body);
    ranges_.erase(op->var.get());
    if (!body) return Stmt();
    if (mn.same_as(op->min) && ext.same_as(op->extent) && body.same_as(op->body)) return s;
    return make_for(op->var, mn, ext, op->for_kind, body);
  }
  Stmt visit_IfThenElse(const IfThenElseNode* op, const Stmt& s) override {
    Expr c = mutate(op->cond);
    if (auto* v = as_const_int(c)) {
      if (*v) return mutate(op->then_case);
      return op->else_case ? mutate(op->else_case) : Stmt();
    }
    Stmt t = mutate(op->then_case);
    Stmt f = op->else_case ? mutate(op->else_case) : Stmt();
    if (!t && !f) return Stmt();
    if (!t) return if_then_else_stmt(make_not(c), f);
    if (c.same_as(op->cond) && t.same_as(op->then_case) && f.same_as(op->else_case)) return s;
    return if_then_else_stmt(c, t, f);
  }
  Stmt visit_SeqStmt(const SeqStmtNode* op, const Stmt& s) override {
    bool changed = false;
    std::vector<Stmt> out;
    for (auto& x : op->seq) {
      Stmt y = mutate(x);
      if (!y.same_as(x)) changed = true;
      if (y) out.push_back(y);
    }
    if (!changed) return s;
    if (out.empty()) return Stmt();
    return seq(std::move(out));
  }
  Stmt visit_Allocate(const AllocateNode* op, const Stmt& s) override {
    Stmt body = mutate(op->body);
    if (!body) return Stmt();
    return body.same_as(op->body) ? s : allocate(op->buffer, body);
  }

 private:
  RangeMap ranges_;
};

}  // namespace

Expr simplify(const Expr& e, const RangeMap& ranges) { return Simplifier(ranges).mutate(e); }

Stmt simplify(const Stmt& s, const RangeMap& ranges) {
  if (!s) return s;
  return Simplifier(ranges).mutate(s);
}

bool can_prove(const Expr& cond, const RangeMap& ranges) {
  Expr r = simplify(cond, ranges);
  auto* v = as_const_int(r);
  return v && *v != 0;
}

}  // namespace tuner::te
