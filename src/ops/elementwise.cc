#include "ops/elementwise.h"

#include <cmath>

#include "ops/op_util.h"

namespace tuner::ops {

using te::Expr;
using te::Intrinsic;
using te::Var;

te::Tensor map_unary(const te::Tensor& x, const std::function<Expr(const Expr&)>& f,
                     const std::string& name) {
  return te::compute(
      x.shape(), [&](const std::vector<Var>& ax) { return f(x(detail::exprs(ax))); }, name);
}

te::Tensor map_binary(const te::Tensor& a, const te::Tensor& b,
                      const std::function<Expr(const Expr&, const Expr&)>& f,
                      const std::string& name) {
  detail::check_same_dtype(a, b, name);
  Shape out = broadcast_shapes({a.shape(), b.shape()}, name);
  return te::compute(
      out,
      [&](const std::vector<Var>& ax) {
        std::vector<Expr> o = detail::exprs(ax);
        return f(a(detail::broadcast_index(o, a.shape())),
                 b(detail::broadcast_index(o, b.shape())));
      },
      name);
}

namespace {

// A float-only unary op.
te::Tensor float_unary(const te::Tensor& x, const std::function<Expr(const Expr&)>& f,
                       const std::string& name) {
  detail::check_float(x, name);
  return map_unary(x, f, name);
}

Expr intrinsic(Intrinsic op, const Expr& v) { return te::call(op, {v}); }

}  // namespace

namespace scalar {
Expr relu(const Expr& v) { return te::max(v, Expr(0)); }
Expr sigmoid(const Expr& v) { return intrinsic(Intrinsic::Sigmoid, v); }
Expr tanh(const Expr& v) { return intrinsic(Intrinsic::Tanh, v); }
Expr hardsigmoid(const Expr& v, double alpha, double beta) {
  return te::max(te::min(Expr(alpha) * v + Expr(beta), Expr(1.0)), Expr(0.0));
}
Expr leaky_relu(const Expr& v, double alpha) { return te::select(v >= Expr(0.0), v, v * Expr(alpha)); }
Expr softsign(const Expr& v) { return v / (Expr(1.0) + intrinsic(Intrinsic::Fabs, v)); }
}  // namespace scalar

te::Tensor relu(const te::Tensor& x, const std::string& name) {
  detail::check_numeric(x, name);
  return map_unary(x, scalar::relu, name);
}

te::Tensor clip(const te::Tensor& x, double lo, double hi, const std::string& name) {
  detail::check_numeric(x, name);
  USER_CHECK(!std::isnan(lo) && !std::isnan(hi))
      << name << ": " << (std::isnan(lo) ? "min" : "max") << " is NaN; a bound must be a number";
  USER_CHECK(lo <= hi) << name << ": min " << lo << " is greater than max " << hi;
  te::DataType t = x.dtype();
  return map_unary(
      x,
      [&](const Expr& v) {
        return te::min(te::max(v, te::make_const(t, lo)), te::make_const(t, hi));
      },
      name);
}

te::Tensor sigmoid(const te::Tensor& x, const std::string& name) {
  return float_unary(x, scalar::sigmoid, name);
}

te::Tensor tanh(const te::Tensor& x, const std::string& name) {
  return float_unary(x, scalar::tanh, name);
}

te::Tensor exp(const te::Tensor& x, const std::string& name) {
  return float_unary(x, [](const Expr& v) { return intrinsic(Intrinsic::Exp, v); }, name);
}

te::Tensor log(const te::Tensor& x, const std::string& name) {
  return float_unary(x, [](const Expr& v) { return intrinsic(Intrinsic::Log, v); }, name);
}

te::Tensor sqrt(const te::Tensor& x, const std::string& name) {
  return float_unary(x, [](const Expr& v) { return intrinsic(Intrinsic::Sqrt, v); }, name);
}

te::Tensor erf(const te::Tensor& x, const std::string& name) {
  return float_unary(x, [](const Expr& v) { return intrinsic(Intrinsic::Erf, v); }, name);
}

te::Tensor gelu(const te::Tensor& x, const std::string& name) {
  return float_unary(
      x,
      [](const Expr& v) {
        return Expr(0.5) * v * (Expr(1.0) + intrinsic(Intrinsic::Erf, v * Expr(M_SQRT1_2)));
      },
      name);
}

te::Tensor gelu_tanh(const te::Tensor& x, const std::string& name) {
  const double k = std::sqrt(2.0 / M_PI);
  return float_unary(
      x,
      [&](const Expr& v) {
        Expr inner = Expr(k) * (v + Expr(0.044715) * v * v * v);
        return Expr(0.5) * v * (Expr(1.0) + intrinsic(Intrinsic::Tanh, inner));
      },
      name);
}

te::Tensor silu(const te::Tensor& x, const std::string& name) {
  return float_unary(x, [](const Expr& v) { return v * intrinsic(Intrinsic::Sigmoid, v); }, name);
}

te::Tensor hardswish(const te::Tensor& x, const std::string& name) {
  return float_unary(
      x,
      [](const Expr& v) {
        return v * te::min(te::max(v + Expr(3.0), Expr(0.0)), Expr(6.0)) / Expr(6.0);
      },
      name);
}

te::Tensor hardsigmoid(const te::Tensor& x, double alpha, double beta, const std::string& name) {
  return float_unary(x, [&](const Expr& v) { return scalar::hardsigmoid(v, alpha, beta); }, name);
}

te::Tensor gated_hardsigmoid(const te::Tensor& x, double alpha, double beta, const std::string& name) {
  return float_unary(x, [&](const Expr& v) { return v * scalar::hardsigmoid(v, alpha, beta); }, name);
}

te::Tensor leaky_relu(const te::Tensor& x, double alpha, const std::string& name) {
  return float_unary(x, [&](const Expr& v) { return scalar::leaky_relu(v, alpha); }, name);
}

te::Tensor neg(const te::Tensor& x, const std::string& name) {
  detail::check_numeric(x, name);
  return map_unary(x, [](const Expr& v) { return -v; }, name);
}

te::Tensor abs(const te::Tensor& x, const std::string& name) {
  detail::check_numeric(x, name);
  if (x.dtype().is_float())
    return map_unary(x, [](const Expr& v) { return intrinsic(Intrinsic::Fabs, v); }, name);
  return map_unary(x, [](const Expr& v) { return te::select(v < Expr(0), -v, v); }, name);
}

te::Tensor add(const te::Tensor& a, const te::Tensor& b, const std::string& name) {
  detail::check_numeric(a, name);
  return map_binary(a, b, [](const Expr& x, const Expr& y) { return x + y; }, name);
}

te::Tensor sub(const te::Tensor& a, const te::Tensor& b, const std::string& name) {
  detail::check_numeric(a, name);
  return map_binary(a, b, [](const Expr& x, const Expr& y) { return x - y; }, name);
}

te::Tensor mul(const te::Tensor& a, const te::Tensor& b, const std::string& name) {
  detail::check_numeric(a, name);
  return map_binary(a, b, [](const Expr& x, const Expr& y) { return x * y; }, name);
}

te::Tensor div(const te::Tensor& a, const te::Tensor& b, const std::string& name) {
  detail::check_numeric(a, name);
  if (a.dtype().is_float())
    return map_binary(a, b, [](const Expr& x, const Expr& y) { return x / y; }, name);
  return map_binary(a, b, integer_div, name);
}

namespace {

// The divisor with 0 (and for signed types -1) replaced by 1, so that no lane traps; the
// callers choose those lanes' results.
Expr safe_divisor(const Expr& b) {
  te::DataType t = b.type();
  Expr bad = te::eq(b, te::make_const(t, 0));
  if (t.is_int()) bad = te::logical_or(bad, te::eq(b, te::make_const(t, -1)));
  return te::select(bad, te::make_const(t, 1), b);
}

}  // namespace

Expr integer_div(const Expr& a, const Expr& b) {
  te::DataType t = a.type();
  Expr zero = te::make_const(t, 0);
  Expr d = safe_divisor(b);
  Expr q = te::floordiv(a, d);
  if (t.is_int()) {
    // Floor division rounds down; truncation differs when inexact with mixed signs.
    Expr round_up = te::logical_and(te::ne(te::floormod(a, d), zero), te::ne(a < zero, d < zero));
    q = te::select(round_up, q + te::make_const(t, 1), q);
    // -a, wrapping for INT_MIN: in unsigned arithmetic (signed i64 arithmetic is emitted
    // no-signed-wrap, where 0 - INT64_MIN would be undefined).
    te::DataType u(te::DataType::UInt, t.bits);
    Expr neg = te::cast(t, te::make_const(u, 0) - te::cast(u, a));
    q = te::select(te::eq(b, te::make_const(t, -1)), neg, q);
  }
  return te::select(te::eq(b, zero), zero, q);
}

Expr integer_mod(const Expr& a, const Expr& b, bool sign_of_dividend) {
  // Where b is 0 or -1 the divisor is 1 and the remainder 0: a mod 0 is 0, a mod -1 is 0.
  Expr d = safe_divisor(b);
  Expr r = te::floormod(a, d);
  if (!sign_of_dividend || !a.type().is_int()) return r;
  Expr zero = te::make_const(a.type(), 0);
  Expr signs_differ = te::ne(a < zero, d < zero);
  return te::select(te::logical_and(te::ne(r, zero), signs_differ), r - d, r);
}

te::Tensor pow(const te::Tensor& a, const te::Tensor& b, const std::string& name) {
  detail::check_float(a, name);
  return map_binary(
      a, b, [](const Expr& x, const Expr& y) { return te::call(Intrinsic::Pow, {x, y}); }, name);
}

// A product of 64 factors, a where the factor's index is below b, else 1 (through a float,
// 3^19 came out 1162261504); b outside [0, 64) has a value only for a of 0, 1 and -1, the
// others overflow or truncate to 0.
te::Tensor integer_pow(const te::Tensor& a, const te::Tensor& b, const std::string& name) {
  te::DataType t = a.dtype(), i64 = te::DataType::i64();
  USER_CHECK(!t.is_float() && !t.is_bool() && !b.dtype().is_float() && !b.dtype().is_bool())
      << name << ": integer_pow needs integers";
  Shape out = broadcast_shapes({a.shape(), b.shape()}, name);
  constexpr int64_t kFactors = 64;
  auto base = [&](const std::vector<Expr>& o) { return a(detail::broadcast_index(o, a.shape())); };
  auto exponent = [&](const std::vector<Expr>& o) {
    return te::cast(i64, b(detail::broadcast_index(o, b.shape())));
  };
  te::Tensor product = te::compute(
      out,
      [&](const std::vector<Var>& ax) {
        std::vector<Expr> o = detail::exprs(ax);
        te::IterVar r = te::reduce_axis(kFactors, "r");
        return te::reduce(te::ReduceKind::Prod,
                          te::select(Expr(r.var) < exponent(o), base(o), te::make_const(t, 1)),
                          {r});
      },
      name + "_product", "reduce");
  return te::compute(
      out,
      [&](const std::vector<Var>& ax) {
        std::vector<Expr> o = detail::exprs(ax);
        Expr x = base(o), e = exponent(o);
        Expr one = te::make_const(t, 1), zero = te::make_const(t, 0);
        Expr other = zero;
        if (t.is_int()) {  // -1 (an unsigned type's largest value is not -1)
          Expr minus_one = te::make_const(t, -1);
          Expr odd = te::ne(te::floormod(e, te::make_const(i64, 2)), te::make_const(i64, 0));
          other = te::select(te::eq(x, minus_one), te::select(odd, minus_one, one), zero);
        }
        other = te::select(te::eq(x, one), one, other);
        Expr in_range =
            te::logical_and(e >= te::make_const(i64, 0), e < te::make_const(i64, kFactors));
        return te::select(in_range, product(o), other);
      },
      name);
}

te::Tensor maximum(const te::Tensor& a, const te::Tensor& b, const std::string& name) {
  detail::check_numeric(a, name);
  return map_binary(a, b, [](const Expr& x, const Expr& y) { return te::max(x, y); }, name);
}

te::Tensor minimum(const te::Tensor& a, const te::Tensor& b, const std::string& name) {
  detail::check_numeric(a, name);
  return map_binary(a, b, [](const Expr& x, const Expr& y) { return te::min(x, y); }, name);
}

te::Tensor equal(const te::Tensor& a, const te::Tensor& b, const std::string& name) {
  return map_binary(a, b, [](const Expr& x, const Expr& y) { return te::eq(x, y); }, name);
}

te::Tensor less(const te::Tensor& a, const te::Tensor& b, const std::string& name) {
  return map_binary(a, b, [](const Expr& x, const Expr& y) { return x < y; }, name);
}

te::Tensor greater(const te::Tensor& a, const te::Tensor& b, const std::string& name) {
  return map_binary(a, b, [](const Expr& x, const Expr& y) { return x > y; }, name);
}

te::Tensor where(const te::Tensor& cond, const te::Tensor& a, const te::Tensor& b,
                 const std::string& name) {
  USER_CHECK(cond.dtype().is_bool()) << name << ": condition must be bool, got "
                                     << cond.dtype().str();
  detail::check_same_dtype(a, b, name);
  Shape out = broadcast_shapes({cond.shape(), a.shape(), b.shape()}, name);
  return te::compute(
      out,
      [&](const std::vector<Var>& ax) {
        std::vector<Expr> o = detail::exprs(ax);
        // Both branches are plain reads, safe to evaluate: select, not if_then_else.
        return te::select(cond(detail::broadcast_index(o, cond.shape())),
                          a(detail::broadcast_index(o, a.shape())),
                          b(detail::broadcast_index(o, b.shape())));
      },
      name);
}

te::Tensor cast(const te::Tensor& x, te::DataType dtype, const std::string& name) {
  USER_CHECK(dtype.is_scalar() && dtype.code != te::DataType::Handle)
      << name << ": cannot cast to " << dtype.str();
  if (dtype.is_bool() && !x.dtype().is_bool())  // x != 0, so that 0.5 is true
    return map_unary(x, [&](const Expr& v) { return te::ne(v, te::make_const(x.dtype(), 0)); },
                     name);
  return map_unary(x, [&](const Expr& v) { return te::cast(dtype, v); }, name);
}

}  // namespace tuner::ops
