// Conv, Gemm, MatMul, BatchNormalization, pooling, softmax, normalizations, reductions.
#include <array>
#include <cmath>

#include "graph/converters_impl.h"
#include "ops/elementwise.h"
#include "ops/nn.h"
#include "ops/op_util.h"
#include "ops/reduce.h"
#include "ops/transform.h"

namespace tuner::graph::detail {

namespace {

using te::Expr;
using te::Var;

// Resolves ONNX 2-D spatial padding (pads attribute or auto_pad) to top, left, bottom, right.
std::array<int64_t, 4> spatial_pads(const ConvertContext& c, const ops::Shape& in,
                                    const std::vector<int64_t>& kernel,
                                    const std::vector<int64_t>& strides,
                                    const std::vector<int64_t>& dilations) {
  std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    std::vector<int64_t> p = c.attr_ints("pads", {0, 0, 0, 0});
    if (p.size() != 4) c.fail("pads must have 4 entries for a 2-D window");
    for (int64_t v : p)
      if (v < 0) c.fail("negative pads are not supported");
    return {p[0], p[1], p[2], p[3]};
  }
  if (auto_pad == "VALID") return {0, 0, 0, 0};
  if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER")
    c.fail("unknown auto_pad '" + auto_pad + "'");
  std::array<int64_t, 4> pads{};
  for (size_t d = 0; d < 2; ++d) {
    int64_t size = in[2 + d], out = (size + strides[d] - 1) / strides[d];
    int64_t total = std::max<int64_t>(
        0, (out - 1) * strides[d] + (kernel[d] - 1) * dilations[d] + 1 - size);
    int64_t small = total / 2, large = total - small;
    pads[d] = auto_pad == "SAME_UPPER" ? small : large;
    pads[d + 2] = auto_pad == "SAME_UPPER" ? large : small;
  }
  return pads;
}

void require_rank(const ConvertContext& c, const te::Tensor& t, int rank, const char* what) {
  if (t.ndim() != rank)
    c.fail(std::string(what) + " must have rank " + std::to_string(rank) + ", got shape " +
           ops::shape_string(t.shape()) + " (only 2-D spatial operators are supported)");
}

std::vector<ConvertOutput> conv(const ConvertContext& c) {
  const te::Tensor& x = c.input(0);
  const te::Tensor& w = c.input(1);
  require_rank(c, x, 4, "input X");
  require_rank(c, w, 4, "weight W");
  std::vector<int64_t> kernel = c.attr_ints("kernel_shape", {w.shape()[2], w.shape()[3]});
  std::vector<int64_t> strides = c.attr_ints("strides", {1, 1});
  std::vector<int64_t> dil = c.attr_ints("dilations", {1, 1});
  if (kernel.size() != 2 || strides.size() != 2 || dil.size() != 2)
    c.fail("kernel_shape, strides and dilations must have 2 entries");
  if (kernel[0] != w.shape()[2] || kernel[1] != w.shape()[3])
    c.fail("kernel_shape disagrees with the weight's shape " + ops::shape_string(w.shape()));
  auto p = spatial_pads(c, x.shape(), kernel, strides, dil);
  ops::Conv2dAttrs a;
  a.stride_h = strides[0], a.stride_w = strides[1];
  a.dilation_h = dil[0], a.dilation_w = dil[1];
  a.pad_top = p[0], a.pad_left = p[1], a.pad_bottom = p[2], a.pad_right = p[3];
  a.groups = c.attr_int("group", 1);
  te::Tensor bias = c.has_input(2) ? c.input(2) : te::Tensor();
  return one(ops::conv2d(x, w, a, bias, c.name()));
}

std::vector<ConvertOutput> gemm(const ConvertContext& c) {
  te::Tensor a = c.input(0), b = c.input(1);
  if (a.ndim() != 2 || b.ndim() != 2) c.fail("A and B must be 2-D");
  if (c.attr_int("transA", 0)) a = ops::transpose(a, {1, 0}, c.name("at"));
  bool trans_b = c.attr_int("transB", 0) != 0;
  te::Tensor y = ops::matmul(a, b, trans_b, c.name("mm"));
  double alpha = c.attr_float("alpha", 1.0), beta = c.attr_float("beta", 1.0);
  te::DataType t = y.dtype();
  if (alpha != 1.0)
    y = ops::map_unary(y, [&](const Expr& v) { return v * te::make_const(t, alpha); },
                       c.name("alpha"));
  if (c.has_input(2) && beta != 0.0) {
    te::Tensor bias = c.input(2);
    if (beta != 1.0)
      bias = ops::map_unary(bias, [&](const Expr& v) { return v * te::make_const(t, beta); },
                            c.name("beta"));
    y = ops::add(y, bias, c.name());
  }
  return one(y);
}

std::vector<ConvertOutput> matmul(const ConvertContext& c) {
  te::Tensor a = c.input(0), b = c.input(1);
  if (a.ndim() == 0 || b.ndim() == 0) c.fail("MatMul operands must not be scalars");
  bool a_vec = a.ndim() == 1, b_vec = b.ndim() == 1;
  if (a_vec) a = ops::reshape(a, {1, a.shape()[0]}, c.name("a2d"));
  if (b_vec) b = ops::reshape(b, {b.shape()[0], 1}, c.name("b2d"));
  te::Tensor y = ops::matmul(a, b, false, c.name(a_vec || b_vec ? "mm" : ""));
  if (a_vec || b_vec) {
    ops::Shape s = y.shape();
    if (b_vec) s.erase(s.end() - 1);
    if (a_vec) s.erase(s.end() - 1 - (b_vec ? 0 : 1));
    y = ops::reshape(y, s, c.name());
  }
  return one(y);
}

std::vector<ConvertOutput> batch_norm(const ConvertContext& c) {
  const te::Tensor& x = c.input(0);
  if (x.ndim() < 2) c.fail("input must have a channel dimension");
  te::Tensor scale = c.input(1), bias = c.input(2), mean = c.input(3), var = c.input(4);
  int64_t channels = x.shape()[1];
  for (const te::Tensor* p : {&scale, &bias, &mean, &var})
    if (p->shape() != ops::Shape{channels})
      c.fail("scale, B, mean and var must have shape [" + std::to_string(channels) + "]");
  double eps = c.attr_float("epsilon", 1e-5);
  te::DataType t = x.dtype();
  return one(te::compute(
      x.shape(),
      [&](const std::vector<Var>& ax) {
        Expr ch = ax[1];
        Expr inv = te::call(te::Intrinsic::Rsqrt, {var(ch) + te::make_const(t, eps)});
        return (x(ops::detail::exprs(ax)) - mean(ch)) * inv * scale(ch) + bias(ch);
      },
      c.name()));
}

ops::Pool2dAttrs pool_attrs(const ConvertContext& c, const te::Tensor& x) {
  require_rank(c, x, 4, "input X");
  std::vector<int64_t> kernel = c.attr("kernel_shape").ints;
  std::vector<int64_t> strides = c.attr_ints("strides", {1, 1});
  std::vector<int64_t> dil = c.attr_ints("dilations", {1, 1});
  if (kernel.size() != 2 || strides.size() != 2) c.fail("only 2-D pooling is supported");
  if (dil != std::vector<int64_t>{1, 1}) c.fail("dilated pooling is not supported");
  if (c.attr_int("storage_order", 0) != 0) c.fail("column-major storage_order is not supported");
  auto p = spatial_pads(c, x.shape(), kernel, strides, dil);
  ops::Pool2dAttrs a;
  a.kernel_h = kernel[0], a.kernel_w = kernel[1];
  a.stride_h = strides[0], a.stride_w = strides[1];
  a.pad_top = p[0], a.pad_left = p[1], a.pad_bottom = p[2], a.pad_right = p[3];
  a.ceil_mode = c.attr_int("ceil_mode", 0) != 0;
  a.count_include_pad = c.attr_int("count_include_pad", 0) != 0;
  return a;
}

std::vector<ConvertOutput> max_pool(const ConvertContext& c) {
  if (c.node().outputs.size() > 1) c.fail("the Indices output is not supported");
  const te::Tensor& x = c.input(0);
  return one(ops::max_pool2d(x, pool_attrs(c, x), c.name()));
}

std::vector<ConvertOutput> avg_pool(const ConvertContext& c) {
  const te::Tensor& x = c.input(0);
  return one(ops::avg_pool2d(x, pool_attrs(c, x), c.name()));
}

// Softmax-like ops: opset < 13 normalizes the input flattened to 2-D at `axis` (default 1);
// opset 13 normalizes one axis (default -1).
template <class F>
std::vector<ConvertOutput> softmax_like(const ConvertContext& c, F f) {
  const te::Tensor& x = c.input(0);
  if (c.opset() >= 13) return one(f(x, c.attr_int("axis", -1), c.name()));
  int axis = ops::normalize_axis(c.attr_int("axis", 1), int(x.ndim()), c.name());
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < int(x.ndim()); ++d) (d < axis ? outer : inner) *= x.shape()[size_t(d)];
  if (axis == int(x.ndim()) - 1) return one(f(x, -1, c.name()));
  te::Tensor flat = ops::reshape(x, {outer, inner}, c.name("flat"));
  return one(ops::reshape(f(flat, -1, c.name("2d")), x.shape(), c.name()));
}

std::vector<ConvertOutput> layer_norm(const ConvertContext& c) {
  const te::Tensor& x = c.input(0);
  if (c.node().outputs.size() > 1) c.fail("the Mean and InvStdDev outputs are not supported");
  int axis = ops::normalize_axis(c.attr_int("axis", -1), int(x.ndim()), c.name());
  std::vector<int64_t> axes;
  for (int d = axis; d < int(x.ndim()); ++d) axes.push_back(d);
  te::Tensor beta = c.has_input(2) ? c.input(2) : te::Tensor();
  return one(ops::layer_norm(x, c.input(1), beta, axes, c.attr_float("epsilon", 1e-5),
                             c.name()));
}

// Reduce*: axes from the attribute (before opset 13 for ReduceSum, 18 for the others) or
// from the optional second input; noop_with_empty_axes is honoured.
std::vector<ConvertOutput> reduce(const ConvertContext& c, ops::ReduceOp op) {
  const te::Tensor& x = c.input(0);
  std::vector<int64_t> axes = c.attr_ints("axes", {});
  if (c.has_input(1)) axes = c.constant_ints(1, "axes");
  bool keep = c.attr_int("keepdims", 1) != 0;
  if (axes.empty() && c.attr_int("noop_with_empty_axes", 0))
    return one(ops::map_unary(x, [](const Expr& v) { return v; }, c.name()));
  return one(ops::reduce(x, op, axes, keep, c.name()));
}

}  // namespace

void add_nn_converters(std::vector<Converter>& out) {
  out.push_back({"Conv", conv, {}});
  out.push_back({"Gemm", gemm, {}});
  out.push_back({"MatMul", matmul, {}});
  out.push_back({"BatchNormalization", batch_norm, {}});
  out.push_back({"MaxPool", max_pool, {}});
  out.push_back({"AveragePool", avg_pool, {}});
  out.push_back({"GlobalAveragePool",
                 [](const ConvertContext& c) {
                   return one(ops::global_avg_pool(c.input(0), c.name()));
                 },
                 {}});
  out.push_back({"GlobalMaxPool",
                 [](const ConvertContext& c) {
                   return one(ops::global_max_pool(c.input(0), c.name()));
                 },
                 {}});
  out.push_back({"Softmax",
                 [](const ConvertContext& c) {
                   return softmax_like(c, [](const te::Tensor& x, int64_t axis,
                                             const std::string& n) {
                     return ops::softmax(x, axis, n);
                   });
                 },
                 {}});
  out.push_back({"LogSoftmax",
                 [](const ConvertContext& c) {
                   return softmax_like(c, [](const te::Tensor& x, int64_t axis,
                                             const std::string& n) {
                     return ops::log_softmax(x, axis, n);
                   });
                 },
                 {}});
  out.push_back({"LayerNormalization", layer_norm, {}});
  out.push_back({"ReduceSum", [](const ConvertContext& c) { return reduce(c, ops::ReduceOp::Sum); },
                 {1}});
  out.push_back({"ReduceMean",
                 [](const ConvertContext& c) { return reduce(c, ops::ReduceOp::Mean); }, {1}});
  out.push_back({"ReduceMax", [](const ConvertContext& c) { return reduce(c, ops::ReduceOp::Max); },
                 {1}});
  out.push_back({"ReduceMin", [](const ConvertContext& c) { return reduce(c, ops::ReduceOp::Min); },
                 {1}});
}

}  // namespace tuner::graph::detail
