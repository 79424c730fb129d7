// Gemm, MatMul, BatchNormalization, softmax, normalizations, reductions.
#include <cmath>
#include <limits>

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

// RMSNormalization (opset 23): x over the root mean square of its trailing axes, times scale.
std::vector<ConvertOutput> rms_norm(const ConvertContext& c) {
  const te::Tensor& x = c.input(0);
  int axis = ops::normalize_axis(c.attr_int("axis", -1), int(x.ndim()), c.name());
  std::vector<int64_t> axes;
  for (int d = axis; d < int(x.ndim()); ++d) axes.push_back(d);
  return one(ops::rms_norm(x, c.input(1), axes, c.attr_float("epsilon", 1e-5), c.name()));
}

using Map = Expr (*)(const Expr&);

Expr square(const Expr& v) { return v * v; }
Expr absolute(const Expr& v) {
  if (v.type().is_float()) return te::call(te::Intrinsic::Fabs, {v});
  return te::select(v < te::make_const(v.type(), 0), -v, v);
}
Expr square_root(const Expr& v) { return te::call(te::Intrinsic::Sqrt, {v}); }
Expr logarithm(const Expr& v) { return te::call(te::Intrinsic::Log, {v}); }

// The axes of a Reduce* node: the attribute (before opset 13 for ReduceSum, 18 for the
// others) or the optional second input.
std::vector<int64_t> reduce_axes(const ConvertContext& c) {
  if (c.has_input(1)) return c.constant_ints(1, "axes");
  return c.attr_ints("axes", {});
}

// Reduce*: `pre` maps each element before the reduction (L1: |x|, L2: x^2), `post` the
// result (L2: sqrt, LogSum: log); with noop_with_empty_axes and no axes, both map x as is.
std::vector<ConvertOutput> reduce(const ConvertContext& c, ops::ReduceOp op, Map pre = nullptr,
                                  Map post = nullptr) {
  const te::Tensor& x = c.input(0);
  if (post && !x.dtype().is_float()) c.fail("needs a floating-point input");
  std::vector<int64_t> axes = reduce_axes(c);
  bool keep = c.attr_int("keepdims", 1) != 0;
  if (axes.empty() && c.attr_int("noop_with_empty_axes", 0))
    return one(ops::map_unary(
        x,
        [&](const Expr& v) {
          Expr r = pre ? pre(v) : v;
          return post ? post(r) : r;
        },
        c.name()));
  te::Tensor in = pre ? ops::map_unary(x, pre, c.name("pre")) : x;
  te::Tensor r = ops::reduce(in, op, axes, keep, c.name(post ? "red" : ""));
  return one(post ? ops::map_unary(r, post, c.name()) : r);
}

// ReduceLogSumExp as max + log(sum(exp(x - max))): no overflow for large inputs. An infinite
// max (a row of -inf, or an inf) is taken as 0 so that the row gives log(0) or log(inf).
std::vector<ConvertOutput> reduce_log_sum_exp(const ConvertContext& c) {
  const te::Tensor& x = c.input(0);
  if (!x.dtype().is_float()) c.fail("needs a floating-point input");
  std::vector<int64_t> axes = reduce_axes(c);
  bool keep = c.attr_int("keepdims", 1) != 0;
  te::DataType t = x.dtype();
  if (axes.empty() && c.attr_int("noop_with_empty_axes", 0))
    return one(ops::map_unary(x, [](const Expr& v) { return v; }, c.name()));
  te::Tensor m = ops::map_unary(
      ops::reduce(x, ops::ReduceOp::Max, axes, /*keepdims=*/true, c.name("max")),
      [&](const Expr& v) {
        Expr inf = te::make_const(t, std::numeric_limits<double>::infinity());
        return te::select(te::eq(absolute(v), inf), te::make_const(t, 0), v);
      },
      c.name("shift"));
  te::Tensor e = ops::map_binary(
      x, m, [](const Expr& v, const Expr& mx) { return te::call(te::Intrinsic::Exp, {v - mx}); },
      c.name("exp"));
  te::Tensor sum = ops::reduce(e, ops::ReduceOp::Sum, axes, keep, c.name("sum"));
  if (!keep) m = ops::reshape(m, sum.shape(), c.name("shift_r"));
  return one(ops::map_binary(sum, m, [](const Expr& s, const Expr& mx) { return logarithm(s) + mx; },
                             c.name()));
}

// The first (or, with `last`, the last) index of the extreme value along `axis`, as int64
// with the axis kept as size 1: the extreme, then the smallest (largest) index holding it.
// With a NaN along the axis, the index of the first (last) NaN, as numpy's argmax.
te::Tensor arg_extreme(const te::Tensor& x, int axis, bool is_max, bool last, const std::string& name) {
  te::Tensor best = ops::reduce(x, is_max ? ops::ReduceOp::Max : ops::ReduceOp::Min, {axis},
                                /*keepdims=*/true, name + "_best");
  int64_t n = x.shape()[size_t(axis)];
  te::DataType i64 = te::DataType::i64();
  return te::compute(
      best.shape(),
      [&](const std::vector<Var>& o) {
        te::IterVar r = te::reduce_axis(n, "r");
        Expr v = x(ops::detail::with_axis(o, size_t(axis), r.var));
        Expr hit = te::eq(v, best(ops::detail::exprs(o)));
        // A NaN is the extreme (the reduction propagates it), and NaN == NaN is false.
        if (x.dtype().is_float()) hit = te::logical_or(hit, te::ne(v, v));
        return te::reduce(last ? te::ReduceKind::Max : te::ReduceKind::Min,
                          te::select(hit, te::cast(i64, r.var), te::make_const(i64, last ? -1 : double(n))),
                          {r});
      },
      name, "reduce");
}

// ArgMax / ArgMin.
std::vector<ConvertOutput> arg_reduce(const ConvertContext& c, bool is_max) {
  const te::Tensor& x = c.input(0);
  int axis = ops::normalize_axis(c.attr_int("axis", 0), int(x.ndim()), c.name());
  bool keep = c.attr_int("keepdims", 1) != 0, last = c.attr_int("select_last_index", 0) != 0;
  te::Tensor idx = arg_extreme(x, axis, is_max, last, keep ? c.name() : c.name("kept"));
  if (keep) return one(idx);
  return one(ops::reshape(idx, ops::reduce_shape(x.shape(), {axis}, false), c.name()));
}

// TopK with a constant k: each element's rank along the axis (how many elements come before
// it: larger ones, or smaller with largest = 0, then equal ones at lower indices, as ONNX
// orders ties; NaN is the largest), then output j gathers the element of rank j. Quadratic
// in the axis length, which suits class scores and detection heads; always sorted.
std::vector<ConvertOutput> top_k(const ConvertContext& c) {
  const te::Tensor& x = c.input(0);
  std::vector<int64_t> kv = c.constant_ints(1, "K");
  if (kv.size() != 1) c.fail("K must hold one value");
  int axis = ops::normalize_axis(c.attr_int("axis", -1), int(x.ndim()), c.name());
  int64_t n = x.shape()[size_t(axis)], k = kv[0];
  if (k < 1 || k > n) c.fail("K must be in [1, " + std::to_string(n) + "], got " + std::to_string(k));
  bool largest = c.attr_int("largest", 1) != 0;
  te::DataType i64 = te::DataType::i64();
  te::Tensor rank = te::compute(
      x.shape(),
      [&](const std::vector<Var>& o) {
        te::IterVar r = te::reduce_axis(n, "r");
        Expr xi = x(ops::detail::exprs(o)), xl = x(ops::detail::with_axis(o, size_t(axis), r.var));
        // NaN orders above every number and equal to NaN (as numpy's sort and onnxruntime):
        // with IEEE comparisons a NaN shared its rank with the extreme, and a rank was empty.
        auto greater = [&](const Expr& a, const Expr& b) {
          if (!x.dtype().is_float()) return a > b;
          return te::logical_or(a > b, te::logical_and(te::ne(a, a), te::eq(b, b)));
        };
        Expr same =
            x.dtype().is_float()
                ? te::logical_or(te::eq(xl, xi), te::logical_and(te::ne(xl, xl), te::ne(xi, xi)))
                : te::eq(xl, xi);
        Expr before = te::logical_or(largest ? greater(xl, xi) : greater(xi, xl),
                                     te::logical_and(same, Expr(r.var) < Expr(o[size_t(axis)])));
        return te::reduce(te::ReduceKind::Sum, te::select(before, te::make_int(1), te::make_int(0)), {r});
      },
      c.name("rank"), "reduce");
  ops::Shape out = x.shape();
  out[size_t(axis)] = k;
  auto pick = [&](bool index, const std::string& name) {
    te::DataType t = index ? i64 : x.dtype();
    return te::compute(
        out,
        [&](const std::vector<Var>& o) {
          te::IterVar r = te::reduce_axis(n, "r");
          std::vector<Expr> at = ops::detail::with_axis(o, size_t(axis), r.var);
          Expr hit = te::eq(rank(at), te::cast(i64, o[size_t(axis)]));
          Expr v = index ? te::cast(i64, r.var) : x(at);
          return te::reduce(te::ReduceKind::Sum, te::select(hit, v, te::make_const(t, 0)), {r});
        },
        name, "reduce");
  };
  return {pick(false, c.name("values")), pick(true, c.name("indices"))};
}

// Hardmax: 1 at the first maximum along the axis, 0 elsewhere.
te::Tensor hardmax(const te::Tensor& x, int64_t axis_attr, const std::string& name) {
  int axis = ops::normalize_axis(axis_attr, int(x.ndim()), name);
  te::Tensor first = arg_extreme(x, axis, /*is_max=*/true, /*last=*/false, name + "_arg");
  return te::compute(
      x.shape(),
      [&](const std::vector<Var>& o) {
        Expr at = te::cast(te::DataType::i64(), o[size_t(axis)]);
        return te::select(te::eq(at, first(ops::detail::with_axis(o, size_t(axis), te::make_int(0)))),
                          te::make_const(x.dtype(), 1), te::make_const(x.dtype(), 0));
      },
      name);
}

// CumSum along a constant axis: out[i] sums x[j] for j <= i (j < i when exclusive; j >= i,
// j > i when reversed). Quadratic in the axis length, which models keep short.
std::vector<ConvertOutput> cumsum(const ConvertContext& c) {
  const te::Tensor& x = c.input(0);
  std::vector<int64_t> a = c.constant_ints(1, "axis");
  if (a.size() != 1) c.fail("axis must hold one value");
  int axis = ops::normalize_axis(a[0], int(x.ndim()), c.name());
  bool excl = c.attr_int("exclusive", 0) != 0, rev = c.attr_int("reverse", 0) != 0;
  int64_t n = x.shape()[size_t(axis)];
  return one(te::compute(
      x.shape(),
      [&](const std::vector<Var>& o) {
        te::IterVar r = te::reduce_axis(n, "r");
        Expr i = o[size_t(axis)], j = r.var;
        Expr in = rev ? (excl ? j > i : j >= i) : (excl ? j < i : j <= i);
        Expr v = x(ops::detail::with_axis(o, size_t(axis), j));
        return te::reduce(te::ReduceKind::Sum, te::select(in, v, te::make_const(x.dtype(), 0)), {r});
      },
      c.name(), "reduce"));
}

// Mean and variance over `axes` (kept as size 1), var = E[(x - mean)^2], of x less a shift:
// each group's first element (the sums are of deviations, as in ops::layer_norm). The
// centered value is x - shift - mean, all three indexed with the reduced axes at 0.
struct Moments {
  te::Tensor shift, mean, var;
};
Moments moments(const ConvertContext& c, const te::Tensor& x, const std::vector<int64_t>& axes) {
  ops::Shape kept = x.shape();
  for (int64_t a : axes) kept[size_t(a)] = 1;
  te::Tensor shift = te::compute(
      kept, [&](const std::vector<Var>& i) { return x(ops::detail::exprs(i)); }, c.name("shift"));
  te::Tensor xs = ops::map_binary(
      x, shift, [](const Expr& v, const Expr& k) { return v - k; }, c.name("shifted"));
  te::Tensor mean = ops::reduce_mean(xs, axes, /*keepdims=*/true, c.name("mean"));
  te::Tensor d2 = ops::map_binary(
      xs, mean, [](const Expr& v, const Expr& m) { return square(v - m); }, c.name("dev2"));
  return {shift, mean, ops::reduce_mean(d2, axes, /*keepdims=*/true, c.name("var"))};
}

// InstanceNormalization: each (n, c) plane normalized, then scale[c] and B[c].
std::vector<ConvertOutput> instance_norm(const ConvertContext& c) {
  const te::Tensor& x = c.input(0);
  if (x.ndim() < 3 || !x.dtype().is_float()) c.fail("input must be floating point [N, C, D1, ...]");
  te::Tensor scale = c.input(1), bias = c.input(2);
  int64_t channels = x.shape()[1];
  if (scale.shape() != ops::Shape{channels} || bias.shape() != ops::Shape{channels})
    c.fail("scale and B must have shape [" + std::to_string(channels) + "]");
  std::vector<int64_t> axes;
  for (int64_t d = 2; d < int64_t(x.ndim()); ++d) axes.push_back(d);
  Moments m = moments(c, x, axes);
  double eps = c.attr_float("epsilon", 1e-5);
  te::DataType t = x.dtype();
  return one(te::compute(
      x.shape(),
      [&](const std::vector<Var>& ax) {
        std::vector<Expr> s = ops::detail::exprs(ax);
        for (size_t d = 2; d < s.size(); ++d) s[d] = te::make_int(0);
        Expr inv = te::call(te::Intrinsic::Rsqrt, {m.var(s) + te::make_const(t, eps)});
        return (x(ops::detail::exprs(ax)) - m.shift(s) - m.mean(s)) * inv * scale(ax[1]) +
               bias(ax[1]);
      },
      c.name()));
}

// GroupNormalization: the channels in num_groups groups, each (n, group) normalized over its
// channels and spatial positions, then scale and bias per group (opset 18) or per channel
// (opset 21, which fixed 18's definition; ONNX Runtime follows each).
std::vector<ConvertOutput> group_norm(const ConvertContext& c) {
  const te::Tensor& x = c.input(0);
  if (x.ndim() < 3 || !x.dtype().is_float()) c.fail("input must be floating point [N, C, D1, ...]");
  int64_t groups = c.attr("num_groups").i, channels = x.shape()[1];
  if (groups < 1 || channels % groups) c.fail("num_groups must divide the channels");
  te::Tensor scale = c.input(1), bias = c.input(2);
  bool per_channel = c.opset() >= 21;
  int64_t n = per_channel ? channels : groups;
  if (scale.shape() != ops::Shape{n} || bias.shape() != ops::Shape{n})
    c.fail(std::string("scale and bias must have shape ") + (per_channel ? "[channels]" : "[num_groups]") +
           " = [" + std::to_string(n) + "] in opset " + std::to_string(c.opset()));
  int64_t per_group = channels / groups;
  for (int d = 2; d < x.ndim(); ++d) per_group *= x.shape()[size_t(d)];
  te::Tensor xr = ops::reshape(x, {x.shape()[0], groups, per_group}, c.name("grouped"));
  Moments m = moments(c, xr, {2});
  double eps = c.attr_float("epsilon", 1e-5);
  te::DataType t = x.dtype();
  int64_t cpg = channels / groups;
  return one(te::compute(
      x.shape(),
      [&](const std::vector<Var>& ax) {
        Expr g = te::floordiv(ax[1], Expr(cpg));
        std::vector<Expr> s = {ax[0], g, te::make_int(0)};
        Expr inv = te::call(te::Intrinsic::Rsqrt, {m.var(s) + te::make_const(t, eps)});
        Expr p = per_channel ? Expr(ax[1]) : g;
        return (x(ops::detail::exprs(ax)) - m.shift(s) - m.mean(s)) * inv * scale(p) + bias(p);
      },
      c.name()));
}

// MeanVarianceNormalization as ONNX defines it: (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9).
std::vector<ConvertOutput> mean_variance_norm(const ConvertContext& c) {
  const te::Tensor& x = c.input(0);
  if (!x.dtype().is_float()) c.fail("needs a floating-point input");
  std::vector<int64_t> axes = c.attr_ints("axes", {0, 2, 3});
  for (int64_t& a : axes) a = ops::normalize_axis(a, int(x.ndim()), c.name());
  // E[x^2] - E[x]^2 is E[(x - E[x])^2], which moments() computes without the cancellation
  // (the difference went negative, and its root NaN, on values far from zero).
  Moments m = moments(c, x, axes);
  te::DataType t = x.dtype();
  te::Tensor denom = ops::map_unary(
      m.var, [&](const Expr& v) { return square_root(v) + te::make_const(t, 1e-9); },
      c.name("std"));
  return one(te::compute(
      x.shape(),
      [&](const std::vector<Var>& ax) {
        std::vector<Expr> s = ops::detail::exprs(ax);
        for (int64_t a : axes) s[size_t(a)] = te::make_int(0);
        return (x(ops::detail::exprs(ax)) - m.shift(s) - m.mean(s)) / denom(s);
      },
      c.name()));
}

// (sum of |x|^p over `axes`, kept as size 1)^(1/p) for p = 1 or 2, as op `name`.
te::Tensor lp_norm(const ConvertContext& c, const te::Tensor& x, const std::vector<int64_t>& axes,
                   const std::string& name) {
  int64_t p = c.attr_int("p", 2);
  if (p != 1 && p != 2) c.fail("p must be 1 or 2, got " + std::to_string(p));
  if (!x.dtype().is_float()) c.fail("needs a floating-point input");
  te::Tensor s = ops::reduce(ops::map_unary(x, p == 1 ? absolute : square, name + "_pow"),
                             ops::ReduceOp::Sum, axes, /*keepdims=*/true, p == 1 ? name : name + "_sum");
  return p == 1 ? s : ops::map_unary(s, square_root, name);
}

// LRN across channels: x / (bias + alpha / size * sum of x^2 over the channel window)^beta.
std::vector<ConvertOutput> lrn(const ConvertContext& c) {
  const te::Tensor& x = c.input(0);
  if (x.ndim() < 3 || !x.dtype().is_float()) c.fail("input must be floating point [N, C, D1, ...]");
  int64_t size = c.attr("size").i;
  if (size < 1) c.fail("size must be positive");
  double alpha = c.attr_float("alpha", 1e-4), beta = c.attr_float("beta", 0.75),
         bias = c.attr_float("bias", 1.0);
  int64_t channels = x.shape()[1], lo = (size - 1) / 2;
  te::DataType t = x.dtype();
  te::Tensor sq = te::compute(
      x.shape(),
      [&](const std::vector<Var>& ax) {
        te::IterVar r = te::reduce_axis(size, "r");
        std::vector<Expr> xi = ops::detail::exprs(ax);
        Expr ch = ax[1] - te::make_int(lo) + r.var;
        xi[1] = te::max(te::min(ch, te::make_int(channels - 1)), te::make_int(0));
        Expr in = te::logical_and(ch >= te::make_int(0), ch < te::make_int(channels));
        return te::reduce(te::ReduceKind::Sum, te::select(in, square(x(xi)), te::make_const(t, 0)), {r});
      },
      c.name("sqsum"), "reduce");
  return one(ops::map_binary(
      x, sq,
      [&](const Expr& v, const Expr& s) {
        Expr base = te::make_const(t, bias) + te::make_const(t, alpha / double(size)) * s;
        return v / te::call(te::Intrinsic::Pow, {base, te::make_const(t, beta)});
      },
      c.name()));
}

}  // namespace

void add_nn_converters(std::vector<Converter>& out) {
  out.push_back({"Gemm", gemm, {}, HalfInputs::kInFloat32});
  out.push_back({"MatMul", matmul, {}, HalfInputs::kInFloat32});
  out.push_back({"BatchNormalization", batch_norm, {}});
  out.push_back({"Softmax",
                 [](const ConvertContext& c) {
                   return softmax_like(c, [](const te::Tensor& x, int64_t axis,
                                             const std::string& n) {
                     return ops::softmax(x, axis, n);
                   });
                 },
                 {},
                 HalfInputs::kInFloat32});
  out.push_back({"LogSoftmax",
                 [](const ConvertContext& c) {
                   return softmax_like(c, [](const te::Tensor& x, int64_t axis,
                                             const std::string& n) {
                     return ops::log_softmax(x, axis, n);
                   });
                 },
                 {},
                 HalfInputs::kInFloat32});
  out.push_back({"LayerNormalization", layer_norm, {}, HalfInputs::kInFloat32KeepStats});
  out.push_back({"RMSNormalization", rms_norm, {}, HalfInputs::kInFloat32, 23});
  out.push_back({"ReduceSum",
                 [](const ConvertContext& c) { return reduce(c, ops::ReduceOp::Sum); },
                 {1},
                 HalfInputs::kInFloat32});
  out.push_back({"ReduceMean",
                 [](const ConvertContext& c) { return reduce(c, ops::ReduceOp::Mean); },
                 {1},
                 HalfInputs::kInFloat32});
  out.push_back({"ReduceMax", [](const ConvertContext& c) { return reduce(c, ops::ReduceOp::Max); },
                 {1}});
  out.push_back({"ReduceMin", [](const ConvertContext& c) { return reduce(c, ops::ReduceOp::Min); },
                 {1}});
  out.push_back({"ReduceProd",
                 [](const ConvertContext& c) { return reduce(c, ops::ReduceOp::Prod); },
                 {1},
                 HalfInputs::kInFloat32});
  out.push_back({"ReduceL1",
                 [](const ConvertContext& c) { return reduce(c, ops::ReduceOp::Sum, absolute); },
                 {1},
                 HalfInputs::kInFloat32});
  out.push_back(
      {"ReduceL2",
       [](const ConvertContext& c) { return reduce(c, ops::ReduceOp::Sum, square, square_root); },
       {1},
       HalfInputs::kInFloat32});
  out.push_back({"ReduceSumSquare",
                 [](const ConvertContext& c) { return reduce(c, ops::ReduceOp::Sum, square); },
                 {1},
                 HalfInputs::kInFloat32});
  out.push_back(
      {"ReduceLogSum",
       [](const ConvertContext& c) { return reduce(c, ops::ReduceOp::Sum, nullptr, logarithm); },
       {1},
       HalfInputs::kInFloat32});
  out.push_back({"ReduceLogSumExp", reduce_log_sum_exp, {1}, HalfInputs::kInFloat32});
  out.push_back({"ArgMax", [](const ConvertContext& c) { return arg_reduce(c, true); }, {}});
  out.push_back({"ArgMin", [](const ConvertContext& c) { return arg_reduce(c, false); }, {}});
  out.push_back({"TopK", top_k, {1}});
  out.push_back({"Hardmax", [](const ConvertContext& c) { return softmax_like(c, hardmax); }, {}});
  out.push_back({"CumSum", cumsum, {1}, HalfInputs::kInFloat32});
  out.push_back({"InstanceNormalization", instance_norm, {}, HalfInputs::kInFloat32});
  out.push_back({"MeanVarianceNormalization", mean_variance_norm, {}, HalfInputs::kInFloat32});
  out.push_back({"GroupNormalization", group_norm, {}, HalfInputs::kInFloat32, 18});
  out.push_back({"LRN", lrn, {}});
  out.push_back({"LpNormalization",
                 [](const ConvertContext& c) {
                   const te::Tensor& x = c.input(0);
                   te::Tensor n = lp_norm(c, x, {c.attr_int("axis", -1)}, c.name("norm"));
                   // A zero row stays zero (onnxruntime), not 0 / 0.
                   return one(ops::map_binary(
                       x, n,
                       [](const Expr& v, const Expr& d) {
                         Expr zero = te::make_const(d.type(), 0);
                         return te::select(te::eq(d, zero), zero, v / d);
                       },
                       c.name()));
                 },
                 {},
                 HalfInputs::kInFloat32});
  out.push_back({"GlobalLpPool",
                 [](const ConvertContext& c) {
                   const te::Tensor& x = c.input(0);
                   if (x.ndim() < 3) c.fail("input must be [N, C, D1, ...]");
                   std::vector<int64_t> axes;
                   for (int64_t d = 2; d < int64_t(x.ndim()); ++d) axes.push_back(d);
                   return one(lp_norm(c, x, axes, c.name()));
                 },
                 {},
                 HalfInputs::kInFloat32});
  out.push_back({"Einsum", einsum, {}, HalfInputs::kInFloat32});
}

}  // namespace tuner::graph::detail
