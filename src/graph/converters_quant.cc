// Integer-arithmetic operators of quantized models: MatMulInteger, QLinearMatMul (ConvInteger
// and QLinearConv are in converters_conv.cc). Products accumulate in int32 as in ONNX Runtime,
// so results match it exactly; QDQ models (QuantizeLinear/DequantizeLinear) run in float.
#include "graph/converters_impl.h"
#include "ops/nn.h"
#include "ops/op_util.h"

namespace tuner::graph::detail {

using te::Expr;
using te::Var;

namespace {

bool per_tensor(const te::Tensor& t) { return t.ndim() == 0 || t.shape() == ops::Shape{1}; }

// A per-tensor parameter's value: shape [] or [1].
Expr scalar_of(const te::Tensor& t) { return t.ndim() == 0 ? t() : t(Expr(0)); }

}  // namespace

te::Tensor centered_int32(const ConvertContext& c, size_t x_input, size_t zp_input, int axis,
                          const std::string& what) {
  const te::Tensor& x = c.input(x_input);
  if (x.dtype() != te::DataType::u8() && x.dtype() != te::DataType::i8())
    c.fail(what + " must be uint8 or int8, got " + x.dtype().str());
  bool has_zp = c.has_input(zp_input);
  te::Tensor zp = has_zp ? c.input(zp_input) : te::Tensor();
  if (has_zp && zp.dtype() != x.dtype()) c.fail(what + "'s zero point must have its type");
  bool scalar = has_zp && per_tensor(zp);
  if (has_zp && !scalar && (axis < 0 || zp.ndim() != 1 || zp.shape()[0] != x.shape()[size_t(axis)]))
    c.fail(what + "'s zero point must be a scalar" +
           (axis < 0 ? std::string() : " or one value per index of its axis " + std::to_string(axis)));
  te::DataType i32 = te::DataType::i32();
  return te::compute(
      x.shape(),
      [&](const std::vector<Var>& o) {
        Expr v = te::cast(i32, x(ops::detail::exprs(o)));
        if (has_zp) v = v - te::cast(i32, scalar ? scalar_of(zp) : zp(o[size_t(axis)]));
        return v;
      },
      c.name(what));
}

Expr scale_at(const ConvertContext& c, size_t scale_input, const te::Tensor& x, int axis,
              const Expr& index, const std::string& what) {
  const te::Tensor& s = c.input(scale_input);
  if (s.dtype() != te::DataType::f32()) c.fail(what + " must be float32");
  if (per_tensor(s)) return scalar_of(s);
  if (axis < 0 || s.ndim() != 1 || s.shape()[0] != x.shape()[size_t(axis)])
    c.fail(what + " must be a scalar" +
           (axis < 0 ? std::string() : " or one value per index of axis " + std::to_string(axis)));
  return s(index);
}

te::Tensor requantize(const ConvertContext& c, const te::Tensor& acc,
                      const std::function<Expr(const std::vector<Var>&)>& multiplier, size_t zp_input,
                      const std::string& name) {
  te::DataType q = c.has_input(zp_input) ? c.input(zp_input).dtype() : te::DataType::u8();
  if (q != te::DataType::u8() && q != te::DataType::i8()) c.fail("the output must be uint8 or int8");
  if (c.has_input(zp_input) && !per_tensor(c.input(zp_input)))
    c.fail("the output's zero point must be a scalar");
  te::DataType f = te::DataType::f32();
  double lo = q == te::DataType::u8() ? 0 : -128, hi = q == te::DataType::u8() ? 255 : 127;
  return te::compute(
      acc.shape(),
      [&](const std::vector<Var>& o) {
        Expr v = te::call(te::Intrinsic::RoundEven, {te::cast(f, acc(ops::detail::exprs(o))) * multiplier(o)});
        if (c.has_input(zp_input)) v = v + te::cast(f, scalar_of(c.input(zp_input)));
        return te::cast(q, te::min(te::max(v, te::make_const(f, lo)), te::make_const(f, hi)));
      },
      name);
}

namespace {

// MatMulInteger: (A - a_zero_point) x (B - b_zero_point) in int32; A's zero point is a
// scalar (or [1]) or one per row, B's a scalar (or [1]) or one per column.
std::vector<ConvertOutput> matmul_integer(const ConvertContext& c) {
  if (c.input(0).ndim() < 2 || c.input(1).ndim() < 2) c.fail("A and B must have rank 2 or more");
  te::Tensor a = centered_int32(c, 0, 2, int(c.input(0).ndim()) - 2, "A");
  te::Tensor b = centered_int32(c, 1, 3, int(c.input(1).ndim()) - 1, "B");
  return one(ops::matmul(a, b, false, c.name()));
}

// QLinearMatMul: MatMulInteger's product, requantized with a_scale * b_scale / y_scale
// (scales per tensor, or per row of A and per column of B).
std::vector<ConvertOutput> qlinear_matmul(const ConvertContext& c) {
  const te::Tensor &a = c.input(0), &b = c.input(3);
  if (a.ndim() < 2 || b.ndim() < 2) c.fail("A and B must have rank 2 or more");
  int row = int(a.ndim()) - 2, col = int(b.ndim()) - 1;
  te::Tensor acc = ops::matmul(centered_int32(c, 0, 2, row, "A"), centered_int32(c, 3, 5, col, "B"),
                               false, c.name("acc"));
  int out_row = int(acc.ndim()) - 2, out_col = int(acc.ndim()) - 1;
  return one(requantize(
      c, acc,
      [&](const std::vector<Var>& o) {
        return scale_at(c, 1, a, row, o[size_t(out_row)], "a_scale") *
               scale_at(c, 4, b, col, o[size_t(out_col)], "b_scale") / scale_at(c, 6, acc, -1, Expr(0), "y_scale");
      },
      7, c.name()));
}

}  // namespace

void add_quant_converters(std::vector<Converter>& out) {
  out.push_back({"MatMulInteger", matmul_integer, {}});
  out.push_back({"QLinearMatMul", qlinear_matmul, {}});
}

}  // namespace tuner::graph::detail
