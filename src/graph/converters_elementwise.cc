// Element-wise operators: activations, math, arithmetic with broadcasting, comparisons.
#include <cmath>
#include <functional>
#include <limits>

#include "graph/converters_impl.h"
#include "graph/tensor_proto.h"
#include "ops/elementwise.h"
#include "ops/op_util.h"
#include "ops/reduce.h"

namespace tuner::graph::detail {

namespace {

using te::Expr;

using Unary = te::Tensor (*)(const te::Tensor&, const std::string&);
using Binary = te::Tensor (*)(const te::Tensor&, const te::Tensor&, const std::string&);

Converter unary(const char* op, Unary f) {
  return {op, [f](const ConvertContext& c) { return one(f(c.input(0), c.name())); }, {}};
}

Converter binary(const char* op, Binary f) {
  return {op, [f](const ConvertContext& c) { return one(f(c.input(0), c.input(1), c.name())); },
          {}};
}

// Min/Max/Sum/Mean take one or more inputs, folded left to right; the last fold is op
// `last` (a single input is returned as is).
te::Tensor fold(const ConvertContext& c, Binary f, const std::string& last) {
  te::Tensor acc = c.input(0);
  for (size_t i = 1; i < c.num_inputs(); ++i)
    acc = f(acc, c.input(i), i + 1 == c.num_inputs() ? last : c.name(std::to_string(i)));
  return acc;
}

Converter variadic(const char* op, Binary f, HalfInputs half = HalfInputs::kAsIs) {
  return {op,
          [f](const ConvertContext& c) {
            te::Tensor acc = fold(c, f, c.name());
            if (c.num_inputs() == 1) acc = ops::map_unary(acc, [](const Expr& v) { return v; }, c.name());
            return one(acc);
          },
          {},
          half};
}

std::vector<ConvertOutput> clip(const ConvertContext& c) {
  const te::Tensor& x = c.input(0);
  te::DataType t = x.dtype();
  // A bound left out is the type's lowest or largest finite value (ONNX), so infinities
  // become finite as in onnxruntime; integers need no bound then.
  double big = t.is_float() ? t.bits == 16 ? 65504.0 : t.bits == 64 ? std::numeric_limits<double>::max()
                                                                     : double(std::numeric_limits<float>::max())
                            : std::numeric_limits<double>::infinity();
  double lo = -big, hi = big;
  if (c.opset() < 11) {
    lo = c.attr_float("min", lo);
    hi = c.attr_float("max", hi);
  } else {
    if (c.has_input(1)) lo = c.constant(1, "min").get(0);
    if (c.has_input(2)) hi = c.constant(2, "max").get(0);
  }
  // An integer bound as an integer: through a double, 2^53 + 1 became 2^53.
  auto bound = [&](int input, double v) {
    if (t.is_float() || c.opset() < 11) return te::make_const(t, v);
    return te::make_int(c.constant(input, input == 1 ? "min" : "max").get_int(0), t);
  };
  return one(ops::map_unary(
      x,
      [&](const Expr& v) {
        Expr r = v;
        if (std::isfinite(lo)) r = te::max(r, bound(1, lo));
        if (std::isfinite(hi)) r = te::min(r, bound(2, hi));
        return r;
      },
      c.name()));
}

std::vector<ConvertOutput> prelu(const ConvertContext& c) {
  return one(ops::map_binary(
      c.input(0), c.input(1),
      [](const Expr& x, const Expr& slope) {
        return te::select(x < te::make_const(x.type(), 0), x * slope, x);
      },
      c.name()));
}

std::vector<ConvertOutput> reciprocal(const ConvertContext& c) {
  const te::Tensor& x = c.input(0);
  return one(ops::map_unary(
      x, [&](const Expr& v) { return te::make_const(x.dtype(), 1.0) / v; }, c.name()));
}

// Pow's result has the base's type; an integer base is raised in float32 and converted back.
// Integer bases: exact integer arithmetic (ops::integer_pow).
std::vector<ConvertOutput> pow(const ConvertContext& c) {
  te::Tensor base = c.input(0), e = c.input(1);
  te::DataType t = base.dtype();
  if (t.is_bool()) c.fail("Pow needs numbers, got bool");
  if (!t.is_float()) {
    if (!e.dtype().is_float()) return one(ops::integer_pow(base, e, c.name()));
    // A float exponent of an integer: in float32, truncated.
    te::DataType f32 = te::DataType::f32();
    te::Tensor fb = ops::cast(base, f32, c.name("base")), fe = ops::cast(e, f32, c.name("exp"));
    return one(ops::cast(ops::pow(fb, fe, c.name("f32")), t, c.name()));
  }
  if (e.dtype() != t) e = ops::cast(e, t, c.name("exp"));
  return one(ops::pow(base, e, c.name()));
}

// A float-only element-wise activation: f gets the element, its dtype and the node (for attributes).
Converter activation(const char* op, std::function<Expr(const Expr&, te::DataType, const ConvertContext&)> f) {
  return {op,
          [op, f](const ConvertContext& c) {
            const te::Tensor& x = c.input(0);
            if (!x.dtype().is_float()) c.fail(std::string(op) + " needs a floating-point input");
            return one(ops::map_unary(x, [&](const Expr& v) { return f(v, x.dtype(), c); }, c.name()));
          },
          {}};
}

Expr fconst(te::DataType t, double v) { return te::make_const(t, v); }

// Converter c for an operator that opset `first` introduced.
Converter since(int64_t first, Converter c) {
  c.since = first;
  return c;
}

// alpha (e^x - 1) for x < 0, else x.
Expr elu_of(const Expr& x, te::DataType t, double alpha) {
  Expr neg = fconst(t, alpha) * (te::call(te::Intrinsic::Exp, {x}) - fconst(t, 1));
  return te::select(x < fconst(t, 0), neg, x);
}

// log(1 + e^x) without overflow: max(x, 0) + log(1 + e^-|x|).
Expr softplus_of(const Expr& x, te::DataType t) {
  Expr e = te::call(te::Intrinsic::Exp, {-te::call(te::Intrinsic::Fabs, {x})});
  return te::max(x, fconst(t, 0)) + te::call(te::Intrinsic::Log, {fconst(t, 1) + e});
}

// ONNX rounds halves to even (the Round intrinsic rounds them away from zero).
Expr round_even(const Expr& x) { return te::call(te::Intrinsic::RoundEven, {x}); }

// A TensorProto.DataType code as a dtype Tuner computes in; an unsupported one by name
// ("data type DOUBLE is not supported"), as for the model's tensors.
te::DataType onnx_dtype(const ConvertContext& c, int64_t code) {
  if (code < 0 || code > std::numeric_limits<int>::max())
    c.fail("data type code " + std::to_string(code) + " is not a TensorProto data type");
  return dtype_from_onnx(int(code), describe(c.node()));
}

std::vector<ConvertOutput> cast(const ConvertContext& c) {
  return one(ops::cast(c.input(0), onnx_dtype(c, c.attr("to").i), c.name()));
}

// EyeLike: ones on the k-th diagonal of a 2-D shape, in the input's dtype or `dtype`.
std::vector<ConvertOutput> eye_like(const ConvertContext& c) {
  const ops::Shape& s = c.input_value(0).shape;
  if (s.size() != 2) c.fail("input must be 2-D");
  te::DataType t = c.has_attr("dtype") ? onnx_dtype(c, c.attr("dtype").i) : c.input_value(0).dtype;
  int64_t k = c.attr_int("k", 0);
  return one(te::compute(
      s,
      [&](const std::vector<te::Var>& o) {
        return te::select(te::eq(Expr(o[1]) - Expr(o[0]), Expr(k)), te::make_const(t, 1),
                          te::make_const(t, 0));
      },
      c.name()));
}

// Mod: the divisor's sign (integers, fmod = 0) or C's fmod, the dividend's sign (fmod = 1,
// required for floats).
std::vector<ConvertOutput> mod(const ConvertContext& c) {
  bool fmod = c.attr_int("fmod", 0) != 0;
  te::DataType t = c.input(0).dtype();
  if (t.is_float() && !fmod) c.fail("floating-point Mod needs fmod = 1");
  if (t.is_bool()) c.fail("Mod needs numbers, got bool");
  return one(ops::map_binary(
      c.input(0), c.input(1),
      [&](const Expr& a, const Expr& b) {
        if (t.is_float()) return te::call(te::Intrinsic::Fmod, {a, b});
        return ops::integer_mod(a, b, fmod);
      },
      c.name()));
}

// Where a quantization's scale (and zero point) applies: one for the tensor, one per index
// of `axis`, or (opset 21's block_size > 0) one per block of `block` indices along `axis`,
// the scale then having x's rank.
struct QuantLayout {
  int axis = 0;
  int64_t block = 0;
};

// The scale (or zero point) at an element.
Expr per_axis(const te::Tensor& p, const std::vector<te::Var>& o, const QuantLayout& q) {
  if (p.ndim() == 0) return p();
  if (q.block == 0) return p(o[size_t(q.axis)]);
  std::vector<Expr> idx = ops::detail::exprs(o);
  idx[size_t(q.axis)] = te::floordiv(idx[size_t(q.axis)], Expr(q.block));
  return p(idx);
}

// The layout of a scale; the zero point must match it.
QuantLayout quant_layout(const ConvertContext& c, const te::Tensor& x, const te::Tensor& scale,
                         const char* what) {
  if (c.has_input(2) && c.input(2).shape() != scale.shape())
    c.fail("the zero point must have the scale's shape");
  QuantLayout q;
  q.block = c.attr_int("block_size", 0);
  if (q.block < 0) c.fail("block_size must not be negative");
  if (scale.ndim() == 0 && q.block == 0) return q;
  q.axis = ops::normalize_axis(c.attr_int("axis", 1), int(x.ndim()), c.name());
  if (q.block == 0) {
    if (scale.ndim() > 1 || scale.shape()[0] != x.shape()[size_t(q.axis)])
      c.fail(std::string(what) + " must be a scalar or have the size of the axis");
    return q;
  }
  ops::Shape want = x.shape();
  want[size_t(q.axis)] = (want[size_t(q.axis)] + q.block - 1) / q.block;
  if (scale.shape() != want)
    c.fail(std::string(what) + " of blocks of " + std::to_string(q.block) + " must have shape " +
           te::shape_str(want) + ", got " + te::shape_str(scale.shape()));
  return q;
}

// QuantizeLinear: saturate(round_even(x / scale) + zero_point) in the zero point's
// type (output_dtype, else uint8, when absent).
std::vector<ConvertOutput> quantize(const ConvertContext& c) {
  const te::Tensor &x = c.input(0), &scale = c.input(1);
  if (!x.dtype().is_float()) c.fail("x must be floating point");
  int64_t out = c.attr_int("output_dtype", 0);  // opset 21
  te::DataType q = c.has_input(2) ? c.input(2).dtype() : out ? onnx_dtype(c, out) : te::DataType::u8();
  if (out && onnx_dtype(c, out) != q) c.fail("output_dtype differs from the zero point's type");
  if (q != te::DataType::u8() && q != te::DataType::i8()) c.fail("only uint8 and int8 are supported");
  QuantLayout layout = quant_layout(c, x, scale, "y_scale");
  double lo = q == te::DataType::u8() ? 0 : -128, hi = q == te::DataType::u8() ? 255 : 127;
  te::DataType t = x.dtype();
  return one(te::compute(
      x.shape(),
      [&](const std::vector<te::Var>& o) {
        Expr v = round_even(x(ops::detail::exprs(o)) / per_axis(scale, o, layout));
        if (c.has_input(2)) v = v + te::cast(t, per_axis(c.input(2), o, layout));
        return te::cast(q, te::min(te::max(v, fconst(t, lo)), fconst(t, hi)));
      },
      c.name()));
}

// DynamicQuantizeLinear: uint8 quantization with the scale and zero point of x's own range
// (widened to hold 0): scale = (max - min) / 255, zero point = round(-min / scale).
std::vector<ConvertOutput> dynamic_quantize(const ConvertContext& c) {
  const te::Tensor& x = c.input(0);
  if (x.dtype() != te::DataType::f32()) c.fail("x must be float32");
  te::DataType f = x.dtype(), u8 = te::DataType::u8();
  te::Tensor lo = ops::reduce(x, ops::ReduceOp::Min, {}, false, c.name("min"));
  te::Tensor hi = ops::reduce(x, ops::ReduceOp::Max, {}, false, c.name("max"));
  auto clamp255 = [&](const Expr& v) { return te::min(te::max(v, fconst(f, 0)), fconst(f, 255)); };
  te::Tensor scale = te::compute(
      {}, [&](const std::vector<te::Var>&) {
        return (te::max(hi(), fconst(f, 0)) - te::min(lo(), fconst(f, 0))) / fconst(f, 255);
      },
      c.name("scale"));
  te::Tensor zero = te::compute(
      {}, [&](const std::vector<te::Var>&) {
        return clamp255(round_even((fconst(f, 0) - te::min(lo(), fconst(f, 0))) / scale()));
      },
      c.name("zero_f"));
  te::Tensor y = te::compute(
      x.shape(),
      [&](const std::vector<te::Var>& o) {
        Expr v = round_even(x(ops::detail::exprs(o)) / scale()) + zero();
        return te::cast(u8, clamp255(v));
      },
      c.name());
  return {y, scale, ops::cast(zero, u8, c.name("zero"))};
}

// DequantizeLinear: (x - zero_point) * scale in the scale's type (or output_dtype, opset 23).
std::vector<ConvertOutput> dequantize(const ConvertContext& c) {
  const te::Tensor &x = c.input(0), &scale = c.input(1);
  if (!scale.dtype().is_float()) c.fail("x_scale must be floating point");
  QuantLayout layout = quant_layout(c, x, scale, "x_scale");
  te::DataType t = scale.dtype();
  int64_t dtype = c.attr_int("output_dtype", 0);
  te::DataType out = dtype ? onnx_dtype(c, dtype) : t;
  if (!out.is_float()) c.fail("output_dtype must be floating point");
  return one(te::compute(
      x.shape(),
      [&](const std::vector<te::Var>& o) {
        Expr v = te::cast(t, x(ops::detail::exprs(o)));
        if (c.has_input(2)) v = v - te::cast(t, per_axis(c.input(2), o, layout));
        v = v * per_axis(scale, o, layout);
        return out == t ? v : te::cast(out, v);
      },
      c.name()));
}

std::vector<ConvertOutput> identity(const ConvertContext& c) {
  return one(ops::map_unary(c.input(0), [](const Expr& v) { return v; }, c.name()));
}

std::vector<ConvertOutput> dropout(const ConvertContext& c) {
  // Training mode with ratio 0 drops nothing (torchvision's swin_t exports 24 such nodes).
  bool training = c.has_input(2) && c.constant(2, "training_mode").get(0) != 0;
  if (training && !(c.has_input(1) && c.constant(1, "ratio").get(0) == 0))
    c.fail("training mode (random dropout) is not supported, except with ratio 0");
  // Inference: the identity, and an all-true mask when the model asks for it.
  std::vector<ConvertOutput> out = identity(c);
  if (c.node().outputs.size() > 1) {
    const te::Tensor& x = c.input(0);
    out.push_back(te::compute(
        x.shape(), [](const std::vector<te::Var>&) { return te::make_const(te::DataType::boolean(), 1); },
        c.name("mask")));
  }
  return out;
}

// Mean: the inputs' sum divided by their count.
std::vector<ConvertOutput> mean(const ConvertContext& c) {
  if (!c.input(0).dtype().is_float()) c.fail("Mean needs floating-point inputs");
  te::Tensor sum = fold(c, ops::add, c.name("sum"));
  te::DataType t = sum.dtype();
  double n = double(c.num_inputs());
  return one(ops::map_unary(sum, [&](const Expr& v) { return v / fconst(t, n); }, c.name()));
}

// And, Or, Xor of bool tensors.
Converter logical(const char* op, Expr (*f)(Expr, Expr)) {
  return {op,
          [op, f](const ConvertContext& c) {
            if (c.input(0).dtype() != te::DataType::boolean() || c.input(1).dtype() != te::DataType::boolean())
              c.fail(std::string(op) + " needs bool inputs");
            return one(ops::map_binary(c.input(0), c.input(1), [&](const Expr& a, const Expr& b) { return f(a, b); },
                                       c.name()));
          },
          {}};
}

}  // namespace

void add_elementwise_converters(std::vector<Converter>& out) {
  out.push_back(unary("Relu", [](const te::Tensor& x, const std::string& n) { return ops::relu(x, n); }));
  out.push_back(unary("Sigmoid", [](const te::Tensor& x, const std::string& n) { return ops::sigmoid(x, n); }));
  out.push_back(unary("Tanh", [](const te::Tensor& x, const std::string& n) { return ops::tanh(x, n); }));
  out.push_back(unary("Exp", [](const te::Tensor& x, const std::string& n) { return ops::exp(x, n); }));
  out.push_back(unary("Log", [](const te::Tensor& x, const std::string& n) { return ops::log(x, n); }));
  out.push_back(unary("Sqrt", [](const te::Tensor& x, const std::string& n) { return ops::sqrt(x, n); }));
  out.push_back(unary("Erf", [](const te::Tensor& x, const std::string& n) { return ops::erf(x, n); }));
  out.push_back(unary("Neg", [](const te::Tensor& x, const std::string& n) { return ops::neg(x, n); }));
  out.push_back(unary("Abs", [](const te::Tensor& x, const std::string& n) { return ops::abs(x, n); }));
  out.push_back(unary("HardSwish", [](const te::Tensor& x, const std::string& n) { return ops::hardswish(x, n); }));
  // Mul(x, Sigmoid(x)) as one op (graph/passes.h, fuse_silu).
  out.push_back(unary("tuner.Silu", [](const te::Tensor& x, const std::string& n) { return ops::silu(x, n); }));
  // PyTorch's exported GELU as one op (fuse_gelu).
  out.push_back(unary("tuner.Gelu", [](const te::Tensor& x, const std::string& n) { return ops::gelu(x, n); }));
  out.push_back(since(20, {"Gelu",
                           [](const ConvertContext& c) {
                             std::string a = c.attr_string("approximate", "none");
                             if (a == "tanh") return one(ops::gelu_tanh(c.input(0), c.name()));
                             if (a != "none") c.fail("approximate must be 'none' or 'tanh', got '" + a + "'");
                             return one(ops::gelu(c.input(0), c.name()));
                           },
                           {}}));
  out.push_back({"LeakyRelu",
                 [](const ConvertContext& c) {
                   return one(ops::leaky_relu(c.input(0), c.attr_float("alpha", 0.01), c.name()));
                 },
                 {}});
  // Mul(x, HardSigmoid(x)) as one op (fuse_silu), HardSigmoid's alpha and beta.
  out.push_back({"tuner.HardSwish",
                 [](const ConvertContext& c) {
                   double alpha = c.attr_float("alpha", 0.2), beta = c.attr_float("beta", 0.5);
                   return one(ops::gated_hardsigmoid(c.input(0), alpha, beta, c.name()));
                 },
                 {}});
  out.push_back({"HardSigmoid",
                 [](const ConvertContext& c) {
                   return one(ops::hardsigmoid(c.input(0), c.attr_float("alpha", 0.2),
                                               c.attr_float("beta", 0.5), c.name()));
                 },
                 {}});
  out.push_back({"PRelu", prelu, {}});
  out.push_back({"Clip", clip, {1, 2}});
  out.push_back({"Reciprocal", reciprocal, {}});
  out.push_back({"Pow", pow, {}});
  out.push_back({"Cast", cast, {}});
  out.push_back({"CastLike",
                 [](const ConvertContext& c) {
                   return one(ops::cast(c.input(0), c.input_value(1).dtype, c.name()));
                 },
                 {1}});
  out.push_back({"EyeLike", eye_like, {0}});
  out.push_back({"Mod", mod, {}});
  out.push_back({"QuantizeLinear", quantize, {}});
  out.push_back({"DequantizeLinear", dequantize, {}});
  out.push_back({"DynamicQuantizeLinear", dynamic_quantize, {}});
  out.push_back(activation("Shrink", [](const Expr& x, te::DataType t, const ConvertContext& c) {
    double lambd = c.attr_float("lambd", 0.5), bias = c.attr_float("bias", 0.0);
    return te::select(x < fconst(t, -lambd), x + fconst(t, bias),
                      te::select(x > fconst(t, lambd), x - fconst(t, bias), fconst(t, 0)));
  }));
  out.push_back({"Identity", identity, {}});
  out.push_back({"Dropout", dropout, {1, 2}});
  out.push_back(binary("Add", [](const te::Tensor& a, const te::Tensor& b, const std::string& n) { return ops::add(a, b, n); }));
  out.push_back(binary("Sub", [](const te::Tensor& a, const te::Tensor& b, const std::string& n) { return ops::sub(a, b, n); }));
  out.push_back(binary("Mul", [](const te::Tensor& a, const te::Tensor& b, const std::string& n) { return ops::mul(a, b, n); }));
  out.push_back(binary("Div", [](const te::Tensor& a, const te::Tensor& b, const std::string& n) { return ops::div(a, b, n); }));
  out.push_back(binary("Equal", [](const te::Tensor& a, const te::Tensor& b, const std::string& n) { return ops::equal(a, b, n); }));
  out.push_back(binary("Less", [](const te::Tensor& a, const te::Tensor& b, const std::string& n) { return ops::less(a, b, n); }));
  out.push_back(binary("Greater", [](const te::Tensor& a, const te::Tensor& b, const std::string& n) { return ops::greater(a, b, n); }));
  out.push_back(variadic("Min", [](const te::Tensor& a, const te::Tensor& b, const std::string& n) { return ops::minimum(a, b, n); }));
  out.push_back(variadic("Max", [](const te::Tensor& a, const te::Tensor& b, const std::string& n) { return ops::maximum(a, b, n); }));
  out.push_back(activation("Elu", [](const Expr& x, te::DataType t, const ConvertContext& c) {
    return elu_of(x, t, c.attr_float("alpha", 1.0));
  }));
  out.push_back(activation("Selu", [](const Expr& x, te::DataType t, const ConvertContext& c) {
    double alpha = c.attr_float("alpha", 1.67326319217681884765625);
    double gamma = c.attr_float("gamma", 1.05070102214813232421875);
    return fconst(t, gamma) * te::select(x <= fconst(t, 0), elu_of(x, t, alpha), x);
  }));
  out.push_back(activation("Celu", [](const Expr& x, te::DataType t, const ConvertContext& c) {
    double alpha = c.attr_float("alpha", 1.0);
    Expr neg = fconst(t, alpha) * (te::call(te::Intrinsic::Exp, {x / fconst(t, alpha)}) - fconst(t, 1));
    return te::max(x, fconst(t, 0)) + te::min(neg, fconst(t, 0));
  }));
  out.push_back(activation("Softplus", [](const Expr& x, te::DataType t, const ConvertContext&) {
    return softplus_of(x, t);
  }));
  out.push_back(activation("Softsign", [](const Expr& x, te::DataType, const ConvertContext&) {
    return ops::scalar::softsign(x);
  }));
  out.push_back(since(18, activation("Mish", [](const Expr& x, te::DataType t, const ConvertContext&) {
    return x * te::call(te::Intrinsic::Tanh, {softplus_of(x, t)});
  })));
  out.push_back(since(24, activation("Swish", [](const Expr& x, te::DataType t, const ConvertContext& c) {
    return x * te::call(te::Intrinsic::Sigmoid, {fconst(t, c.attr_float("alpha", 1.0)) * x});
  })));
  out.push_back(activation("ThresholdedRelu", [](const Expr& x, te::DataType t, const ConvertContext& c) {
    return te::select(x > fconst(t, c.attr_float("alpha", 1.0)), x, fconst(t, 0));
  }));
  for (auto [op, fn] : std::initializer_list<std::pair<const char*, te::Intrinsic>>{
           {"Sin", te::Intrinsic::Sin}, {"Cos", te::Intrinsic::Cos}, {"Tan", te::Intrinsic::Tan},
           {"Asin", te::Intrinsic::Asin}, {"Acos", te::Intrinsic::Acos}, {"Atan", te::Intrinsic::Atan},
           {"Sinh", te::Intrinsic::Sinh}, {"Cosh", te::Intrinsic::Cosh}, {"Asinh", te::Intrinsic::Asinh},
           {"Acosh", te::Intrinsic::Acosh}, {"Atanh", te::Intrinsic::Atanh}})
    out.push_back(activation(op, [fn](const Expr& x, te::DataType, const ConvertContext&) {
      return te::call(fn, {x});
    }));
  out.push_back(activation("Floor", [](const Expr& x, te::DataType, const ConvertContext&) {
    return te::call(te::Intrinsic::Floor, {x});
  }));
  out.push_back(activation("Ceil", [](const Expr& x, te::DataType, const ConvertContext&) {
    return te::call(te::Intrinsic::Ceil, {x});
  }));
  out.push_back(activation("Round", [](const Expr& x, te::DataType, const ConvertContext&) {
    return round_even(x);
  }));
  out.push_back({"Sign",
                 [](const ConvertContext& c) {
                   te::DataType t = c.input(0).dtype();
                   return one(ops::map_unary(
                       c.input(0),
                       [&](const Expr& x) {
                         // Zero and NaN are their own sign (numpy, onnxruntime).
                         Expr zero = te::make_const(t, 0);
                         return te::select(x > zero, te::make_const(t, 1),
                                           te::select(x < zero, te::make_const(t, -1), x));
                       },
                       c.name()));
                 },
                 {}});
  out.push_back({"IsNaN",
                 [](const ConvertContext& c) {
                   return one(ops::map_unary(c.input(0), [](const Expr& x) { return te::ne(x, x); }, c.name()));
                 },
                 {}});
  out.push_back({"IsInf",
                 [](const ConvertContext& c) {
                   te::DataType t = c.input(0).dtype();
                   bool neg = c.attr_int("detect_negative", 1) != 0, pos = c.attr_int("detect_positive", 1) != 0;
                   double inf = std::numeric_limits<double>::infinity();
                   return one(ops::map_unary(
                       c.input(0),
                       [&](const Expr& x) {
                         Expr p = pos ? te::eq(x, te::make_const(t, inf)) : te::make_const(te::DataType::boolean(), 0);
                         Expr n = neg ? te::eq(x, te::make_const(t, -inf)) : te::make_const(te::DataType::boolean(), 0);
                         return te::logical_or(p, n);
                       },
                       c.name()));
                 },
                 {}});
  // Many float16 terms add up in float32, rounded once (60000 + 60000 - 60000 was inf).
  out.push_back(variadic(
      "Sum", [](const te::Tensor& a, const te::Tensor& b, const std::string& n) { return ops::add(a, b, n); },
      HalfInputs::kInFloat32));
  out.push_back({"Mean", mean, {}, HalfInputs::kInFloat32});
  out.push_back(binary("GreaterOrEqual", [](const te::Tensor& a, const te::Tensor& b, const std::string& n) {
    return ops::map_binary(a, b, [](const Expr& x, const Expr& y) { return x >= y; }, n);
  }));
  out.push_back(binary("LessOrEqual", [](const te::Tensor& a, const te::Tensor& b, const std::string& n) {
    return ops::map_binary(a, b, [](const Expr& x, const Expr& y) { return x <= y; }, n);
  }));
  out.push_back(logical("And", te::logical_and));
  out.push_back(logical("Or", te::logical_or));
  out.push_back(logical("Xor", te::ne));
  out.push_back({"Where",
                 [](const ConvertContext& c) {
                   return one(ops::where(c.input(0), c.input(1), c.input(2), c.name()));
                 },
                 {}});
  out.push_back({"Not",
                 [](const ConvertContext& c) {
                   if (!c.input(0).dtype().is_bool()) c.fail("Not needs a bool input, got " + c.input(0).dtype().str());
                   return one(ops::map_unary(c.input(0), [](const Expr& v) { return te::logical_not(v); },
                                             c.name()));
                 },
                 {}});
}

}  // namespace tuner::graph::detail
