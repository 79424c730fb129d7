// Integer-arithmetic operators of quantized models: MatMulInteger, QLinearMatMul (ConvInteger
// and QLinearConv are in converters_conv.cc), and ONNX Runtime's QLinearAdd,
// QLinearGlobalAveragePool and QGemm (domain com.microsoft), which its quantizer's QOperator
// models use. Products accumulate in int32 as in ONNX Runtime, so results match it; QDQ
// models (QuantizeLinear/DequantizeLinear) run in float.
#include "graph/converters_impl.h"
#include "graph/passes_impl.h"
#include "ops/elementwise.h"
#include "ops/nn.h"
#include "ops/op_util.h"
#include "ops/reduce.h"
#include "ops/transform.h"

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
  bool has_zp = c.has_input(zp_input);
  // int32 without a zero point: already centred (pack_integer_conv_weights).
  if (x.dtype() == te::DataType::i32() && !has_zp) return x;
  if (x.dtype() != te::DataType::u8() && x.dtype() != te::DataType::i8())
    c.fail(what + " must be uint8 or int8, got " + x.dtype().str());
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

namespace {

// A rounded float32 value plus the zero point at input `zp_input` (absent: uint8 0), saturated
// to its type: how every quantized output here ends.
Expr saturated(const ConvertContext& c, Expr rounded, size_t zp_input) {
  te::DataType q = c.has_input(zp_input) ? c.input(zp_input).dtype() : te::DataType::u8();
  if (q != te::DataType::u8() && q != te::DataType::i8()) c.fail("the output must be uint8 or int8");
  if (c.has_input(zp_input) && !per_tensor(c.input(zp_input)))
    c.fail("the output's zero point must be a scalar");
  te::DataType f = te::DataType::f32();
  if (c.has_input(zp_input)) rounded = rounded + te::cast(f, scalar_of(c.input(zp_input)));
  double lo = q == te::DataType::u8() ? 0 : -128, hi = q == te::DataType::u8() ? 255 : 127;
  return te::cast(q, te::min(te::max(rounded, te::make_const(f, lo)), te::make_const(f, hi)));
}

}  // namespace

te::Tensor requantize(const ConvertContext& c, const te::Tensor& acc,
                      const std::function<Expr(const std::vector<Var>&)>& multiplier, size_t zp_input,
                      const std::string& name) {
  te::DataType f = te::DataType::f32();
  return te::compute(
      acc.shape(),
      [&](const std::vector<Var>& o) {
        Expr v = te::call(te::Intrinsic::RoundEven, {te::cast(f, acc(ops::detail::exprs(o))) * multiplier(o)});
        return saturated(c, v, zp_input);
      },
      name);
}

namespace {

// (A - a_zp) x (B - b_zp) in int32, A input 0 and B input `bi` (zero points 2 and bi + 2);
// A's zero point is a scalar (or [1]) or one per row, B's a scalar (or [1]) or one per
// column. B may come centred and packed [n/b, k, b] (attribute b_block, pack_matmul_weights).
te::Tensor integer_product(const ConvertContext& c, size_t bi, const std::string& name) {
  if (c.input(0).ndim() < 2 || c.input(bi).ndim() < 2) c.fail("A and B must have rank 2 or more");
  int64_t block = c.attr_int("b_block", 0);
  if (c.has_attr("tuner_a_offset")) {
    // pack_matmul_weights' byte dot form: A and B in words of 4 k's bytes, B centred and
    // packed; (A - a_zp) B = A B - (a_zp + offset) colsum(B), colsum(B) the input after B's zero point.
    size_t si = matmul_column_sums_input(c.node().op);
    const te::Tensor &a = c.input(0), &b = c.input(bi), &colsum = c.input(si);
    te::Tensor acc = ops::matmul_packed(a, b, name + "_dot", true);
    te::DataType i32 = te::DataType::i32();
    bool has_zp = c.has_input(2);
    if (has_zp && !per_tensor(c.input(2))) c.fail("A's zero point must be a scalar here");
    return te::compute(
        acc.shape(),
        [&](const std::vector<Var>& o) {
          Expr zp = te::make_const(i32, double(c.attr_int("tuner_a_offset", 0)));
          if (has_zp) zp = te::cast(i32, scalar_of(c.input(2))) + zp;
          return acc(ops::detail::exprs(o)) - zp * colsum(o.back());
        },
        name);
  }
  te::Tensor a = centered_int32(c, 0, 2, int(c.input(0).ndim()) - 2, "A");
  if (block) {
    const te::Tensor& b = c.input(bi);
    if (b.ndim() != 3 || b.shape()[2] != block || b.dtype() != te::DataType::i32() || c.has_input(bi + 2))
      c.fail("b_block needs B centred in int32 and packed [n/b, k, b]");
    return ops::matmul_packed(a, b, name);
  }
  te::Tensor b = centered_int32(c, bi, bi + 2, int(c.input(bi).ndim()) - 1, "B");
  return ops::matmul(a, b, false, name);
}

// MatMulInteger: the int32 product itself.
std::vector<ConvertOutput> matmul_integer(const ConvertContext& c) { return one(integer_product(c, 1, c.name())); }

// QLinearMatMul: MatMulInteger's product, requantized with a_scale * b_scale / y_scale
// (scales per tensor, or per row of A and per column of B).
std::vector<ConvertOutput> qlinear_matmul(const ConvertContext& c) {
  const te::Tensor& a = c.input(0);
  te::Tensor acc = integer_product(c, 3, c.name("acc"));
  int row = int(a.ndim()) - 2, out_row = int(acc.ndim()) - 2, out_col = int(acc.ndim()) - 1;
  return one(requantize(
      c, acc,
      [&](const std::vector<Var>& o) {
        // B's scale is checked against the product's columns (B itself may be packed).
        return scale_at(c, 1, a, row, o[size_t(out_row)], "a_scale") *
               scale_at(c, 4, acc, out_col, o[size_t(out_col)], "b_scale") / scale_at(c, 6, acc, -1, Expr(0), "y_scale");
      },
      7, c.name()));
}

// ONNX Runtime's QLinearAdd (com.microsoft): A and B dequantized, added and quantized to C's
// scale: round_even((a_scale (A - a_zp) + b_scale (B - b_zp)) / c_scale) + c_zp, as its
// scalar kernel computes it (its vector kernels use fixed-point multipliers and may round a
// value half a step the other way).
std::vector<ConvertOutput> qlinear_add(const ConvertContext& c) {
  te::Tensor a = centered_int32(c, 0, 2, -1, "A"), b = centered_int32(c, 3, 5, -1, "B");
  te::DataType f = te::DataType::f32();
  te::Tensor sum = ops::map_binary(
      a, b,
      [&](const Expr& va, const Expr& vb) {
        // As ONNX Runtime: scale ratios, no division per element (it doubled a residual conv's
        // time, whose epilogue this is).
        Expr c_scale = scale_at(c, 6, a, -1, Expr(0), "C_scale");
        return scale_at(c, 1, a, -1, Expr(0), "A_scale") / c_scale * te::cast(f, va) +
               scale_at(c, 4, b, -1, Expr(0), "B_scale") / c_scale * te::cast(f, vb);
      },
      c.name("sum"));
  return one(requantize(
      c, sum, [&](const std::vector<Var>&) { return te::make_const(f, 1.0); }, 7, c.name()));
}

// ONNX Runtime's QLinearGlobalAveragePool (com.microsoft): the int32 sum of x - x_zp over
// the spatial axes (NCHW, or NHWC with channels_last), requantized with
// x_scale / (y_scale x positions).
std::vector<ConvertOutput> qlinear_global_avg_pool(const ConvertContext& c) {
  const te::Tensor& x = c.input(0);
  if (x.ndim() < 3) c.fail("X must have a batch, a channel and spatial axes");
  bool last = c.attr_int("channels_last", 0) != 0;
  te::Tensor centered = centered_int32(c, 0, 2, -1, "x");
  std::vector<int64_t> axes;
  for (int d = last ? 1 : 2; d < int(x.ndim()) - (last ? 1 : 0); ++d) axes.push_back(d);
  int64_t positions = 1;
  for (int64_t d : axes) positions *= x.shape()[size_t(d)];
  te::Tensor acc = ops::reduce_sum(centered, axes, true, c.name("sum"));
  te::DataType f = te::DataType::f32();
  return one(requantize(
      c, acc,
      [&](const std::vector<Var>&) {
        return scale_at(c, 1, x, -1, Expr(0), "x_scale") /
               (scale_at(c, 3, x, -1, Expr(0), "y_scale") * te::make_const(f, double(positions)));
      },
      4, c.name()));
}

// ONNX Runtime's QGemm (com.microsoft): alpha x a_scale x b_scale x ((A - a_zp)(B - b_zp) + C)
// with C int32, quantized to y_scale and y_zp when y_scale is given, else float32; B's scale
// and zero point per tensor or per column (per row of B with transB).
std::vector<ConvertOutput> qgemm(const ConvertContext& c) {
  bool words = c.has_attr("tuner_a_offset");  // pack_matmul_weights' byte dot form (B' words packed)
  if (c.input(0).ndim() != 2 || c.input(3).ndim() != (words ? 3 : 2)) c.fail("A and B must be 2-D");
  bool trans_b = c.attr_int("transB", 0) != 0;
  int col = trans_b ? 0 : 1;
  te::Tensor acc;
  const te::Tensor* b_scaled = &c.input(3);  // what b_scale's per-column axis `col` indexes
  if (words) {
    acc = integer_product(c, 3, c.name("acc"));
    b_scaled = &acc, col = 1;
  } else {
    te::Tensor a = centered_int32(c, 0, 2, -1, "A"), b = centered_int32(c, 3, 5, col, "B");
    if (c.attr_int("transA", 0)) a = ops::transpose(a, {1, 0}, c.name("at"));
    acc = ops::matmul(a, b, trans_b, c.name("acc"));
  }
  if (c.has_input(6)) {
    if (c.input(6).dtype() != te::DataType::i32()) c.fail("C must be int32");
    acc = ops::add(acc, c.input(6), c.name("bias"));
  }
  te::DataType f = te::DataType::f32();
  double alpha = c.attr_float("alpha", 1.0);
  auto scale = [&](const std::vector<Var>& o) {
    return te::make_const(f, alpha) * scale_at(c, 1, c.input(0), -1, Expr(0), "a_scale") *
           scale_at(c, 4, *b_scaled, col, o[1], "b_scale");
  };
  if (c.has_input(7))
    return one(requantize(
        c, acc, [&](const std::vector<Var>& o) { return scale(o) / scale_at(c, 7, acc, -1, Expr(0), "y_scale"); }, 8,
        c.name()));
  return one(te::compute(
      acc.shape(), [&](const std::vector<Var>& o) { return te::cast(f, acc(ops::detail::exprs(o))) * scale(o); },
      c.name()));
}

// ONNX Runtime's QLinearMul (com.microsoft): round_even((A - a_zp)(B - b_zp) x a_scale x
// b_scale / c_scale) + c_zp, broadcast, saturated: its kernels' formula (the product exact in
// int32, one float ratio per op).
std::vector<ConvertOutput> qlinear_mul(const ConvertContext& c) {
  te::Tensor a = centered_int32(c, 0, 2, -1, "A"), b = centered_int32(c, 3, 5, -1, "B");
  te::Tensor product = ops::map_binary(a, b, [](const Expr& va, const Expr& vb) { return va * vb; }, c.name("product"));
  return one(requantize(
      c, product,
      [&](const std::vector<Var>&) {
        return scale_at(c, 1, a, -1, Expr(0), "A_scale") * scale_at(c, 4, b, -1, Expr(0), "B_scale") /
               scale_at(c, 6, a, -1, Expr(0), "C_scale");
      },
      7, c.name()));
}

// v (float32) quantized to the scale at input `si` and zero point at `zi` (absent: uint8 0):
// saturate(round_even(v / scale) + zero point), as QuantizeLinear.
Expr quantized(const ConvertContext& c, const Expr& v, size_t si, size_t zi, const te::Tensor& like) {
  Expr scale = scale_at(c, si, like, -1, Expr(0), "the output's scale");
  return saturated(c, te::call(te::Intrinsic::RoundEven, {v / scale}), zi);
}

// ONNX Runtime's QLinearSigmoid (com.microsoft): X dequantized, its logistic, quantized to Y's
// scale and zero point (ONNX Runtime tabulates the 256 values with its own logistic, which may
// round a value at a half step the other way).
std::vector<ConvertOutput> qlinear_sigmoid(const ConvertContext& c) {
  te::Tensor x = centered_int32(c, 0, 2, -1, "X");
  te::DataType f = te::DataType::f32();
  return one(te::compute(
      x.shape(),
      [&](const std::vector<Var>& o) {
        Expr v = te::cast(f, x(ops::detail::exprs(o))) * scale_at(c, 1, x, -1, Expr(0), "X_scale");
        return quantized(c, te::call(te::Intrinsic::Sigmoid, {v}), 3, 4, x);
      },
      c.name()));
}

// ONNX Runtime's QLinearConcat (com.microsoft): inputs Y_scale, Y_zero_point, then (X, X_scale,
// X_zero_point) per tensor; each X requantized to Y's scale and zero point (dequantized, then
// quantized: its lookup table's values) unless they are its own, then concatenated along axis.
std::vector<ConvertOutput> qlinear_concat(const ConvertContext& c) {
  if (c.num_inputs() < 5 || (c.num_inputs() - 2) % 3 != 0)
    c.fail("takes Y_scale, Y_zero_point and (X, X_scale, X_zero_point) per input");
  auto same_constant = [&](size_t i, size_t j) {
    if (!c.has_input(i) || !c.has_input(j)) return c.has_input(i) == c.has_input(j);
    return c.input_value(i).same_scalar_constant(c.input_value(j));
  };
  std::vector<te::Tensor> parts;
  te::DataType f = te::DataType::f32();
  for (size_t k = 2; k + 2 < c.num_inputs(); k += 3) {
    const te::Tensor& x = c.input(k);
    if (same_constant(k + 1, 0) && same_constant(k + 2, 1)) {
      parts.push_back(x);
      continue;
    }
    te::Tensor centred = centered_int32(c, k, k + 2, -1, "X" + std::to_string(parts.size()));
    parts.push_back(te::compute(
        x.shape(),
        [&](const std::vector<Var>& o) {
          Expr v = te::cast(f, centred(ops::detail::exprs(o))) * scale_at(c, k + 1, x, -1, Expr(0), "X_scale");
          return quantized(c, v, 0, 1, x);
        },
        c.name("part" + std::to_string(parts.size()))));
  }
  for (const te::Tensor& p : parts)
    if (p.dtype() != parts[0].dtype()) c.fail("every input must have Y's type");
  return one(ops::concat(parts, c.attr("axis").i, c.name()));
}

// byte_tables' look-up: y = table[x] for uint8 x and a table of 256 bytes.
std::vector<ConvertOutput> look_up(const ConvertContext& c) {
  const te::Tensor &x = c.input(0), &table = c.input(1);
  if (x.dtype() != te::DataType::u8() || table.ndim() != 1 || table.shape()[0] != 256)
    c.fail("needs uint8 data and 256 entries");
  return one(te::compute(
      x.shape(),
      [&](const std::vector<Var>& o) { return table(te::cast(te::DataType::i64(), x(ops::detail::exprs(o)))); },
      c.name()));
}

// byte_dot_convs' data words of a conv: 4 channels' bytes in one int32, padded.
std::vector<ConvertOutput> byte_words(const ConvertContext& c) {
  if (c.attr_int("axis", 1) == -1) return one(ops::byte_words_last(c.input(0), c.name()));  // a matmul's A
  std::vector<int64_t> p = c.attr_ints("pads", {0, 0, 0, 0});
  if (p.size() != 4) c.fail("pads must have 4 entries");
  return one(ops::byte_words(c.input(0), c.attr_int("fill", 0), {p[0], p[1], p[2], p[3]}, c.name()));
}

}  // namespace

void add_quant_converters(std::vector<Converter>& out) {
  out.push_back({"MatMulInteger", matmul_integer, {}});
  out.push_back({"QLinearMatMul", qlinear_matmul, {}});
  out.push_back({"com.microsoft.QLinearAdd", qlinear_add, {}});
  out.push_back({"com.microsoft.QLinearGlobalAveragePool", qlinear_global_avg_pool, {}});
  out.push_back({"com.microsoft.QGemm", qgemm, {}});
  out.push_back({"com.microsoft.QLinearMul", qlinear_mul, {}});
  out.push_back({"com.microsoft.QLinearSigmoid", qlinear_sigmoid, {}});
  out.push_back({"com.microsoft.QLinearConcat", qlinear_concat, {}});
  out.push_back({"tuner.ByteWords", byte_words, {}});
  out.push_back({"tuner.LookUp", look_up, {}});
}

}  // namespace tuner::graph::detail
