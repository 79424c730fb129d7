// Gemm, MatMul, BatchNormalization, softmax, normalizations, reductions.
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

// B packed [n/b, k, b] by pack_matmul_weights, which sets b_block.
bool packed_b(const ConvertContext& c) {
  if (c.attr_int("b_block", 0) == 0) return false;
  if (c.input(1).ndim() != 3 || c.input(1).shape()[2] != c.attr_int("b_block", 0))
    c.fail("b_block needs B packed [n/b, k, b]");
  return true;
}

std::vector<ConvertOutput> gemm(const ConvertContext& c) {
  te::Tensor a = c.input(0), b = c.input(1);
  bool packed = packed_b(c);
  if (a.ndim() != 2 || b.ndim() != (packed ? 3 : 2)) c.fail("A and B must be 2-D");
  if (c.attr_int("transA", 0)) a = ops::transpose(a, {1, 0}, c.name("at"));
  bool trans_b = c.attr_int("transB", 0) != 0;
  te::Tensor y = packed ? ops::matmul_packed(a, b, c.name("mm")) : ops::matmul(a, b, trans_b, c.name("mm"));
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
  if (packed_b(c)) return one(ops::matmul_packed(a, b, c.name()));
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
  if (c.node().outputs.size() > 1 || c.attr_int("training_mode", 0))
    c.fail("training mode (running mean and variance outputs) is not supported");
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

// LayerNormalization; the optional Mean and InvStdDev outputs keep the normalized axes as 1s.
std::vector<ConvertOutput> layer_norm(const ConvertContext& c) {
  const te::Tensor& x = c.input(0);
  int axis = ops::normalize_axis(c.attr_int("axis", -1), int(x.ndim()), c.name());
  std::vector<int64_t> axes;
  for (int d = axis; d < int(x.ndim()); ++d) axes.push_back(d);
  te::Tensor beta = c.has_input(2) ? c.input(2) : te::Tensor();
  double eps = c.attr_float("epsilon", 1e-5);
  ops::LayerNormStats stats;
  std::vector<ConvertOutput> out =
      one(ops::layer_norm(x, c.input(1), beta, axes, eps, c.name(), &stats));
  if (c.node().outputs.size() == 1) return out;
  ops::Shape kept = x.shape();
  for (size_t d = size_t(axis); d < kept.size(); ++d) kept[d] = 1;
  out.push_back(ops::reshape(stats.mean, kept, c.name("mean_out")));
  te::DataType t = x.dtype();
  te::Tensor inv = ops::map_unary(
      stats.var,
      [&](const Expr& v) { return te::call(te::Intrinsic::Rsqrt, {v + te::make_const(t, eps)}); },
      c.name("inv_std"));
  out.push_back(ops::reshape(inv, kept, c.name("inv_std_out")));
  return out;
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
  out.push_back({"Gemm", gemm, {}});
  out.push_back({"MatMul", matmul, {}});
  out.push_back({"BatchNormalization", batch_norm, {}});
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
