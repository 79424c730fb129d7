#include "ops/reduce.h"

#include <algorithm>

#include "ops/op_util.h"

namespace tuner::ops {

using te::Expr;
using te::IterVar;
using te::Var;

namespace {

// Reduction axes for the dimensions `axes` of `shape`, named r<dim>.
std::vector<IterVar> reduce_axes(const Shape& shape, const std::vector<int>& axes) {
  std::vector<IterVar> r;
  for (int d : axes) r.push_back(te::reduce_axis(shape[d], "r" + std::to_string(d)));
  return r;
}

// The full index of x from an output index `out` (reduced dims dropped, or kept as size 1
// when keepdims) and the reduction variables.
std::vector<Expr> full_index(int ndim, const std::vector<int>& axes, const std::vector<Var>& out,
                             const std::vector<IterVar>& r, bool keepdims) {
  std::vector<Expr> idx;
  size_t o = 0, j = 0;
  for (int d = 0; d < ndim; ++d) {
    bool reduced = j < axes.size() && axes[j] == d;
    if (reduced) {
      idx.push_back(r[j++].var);
      if (keepdims) ++o;
    } else {
      idx.push_back(out[o++]);
    }
  }
  return idx;
}

// The index of a reduced (keepdims = false) tensor from a full index.
std::vector<Expr> drop_axes(const std::vector<Var>& full, const std::vector<int>& axes) {
  std::vector<Expr> idx;
  for (int d = 0; d < int(full.size()); ++d)
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) idx.push_back(full[d]);
  return idx;
}

// A normalization's scale or bias: x's dtype and the normalized shape, or one that broadcasts
// to it ([1], [1, C]: onnxruntime takes them); an undefined one passes.
void check_norm_param(const te::Tensor& x, const te::Tensor& p, const Shape& inner,
                      const char* what, const std::string& name) {
  if (!p) return;
  detail::check_same_dtype(x, p, name);
  const Shape& ps = p.shape();
  bool fits = ps.size() <= inner.size();
  for (size_t d = 0; fits && d < ps.size(); ++d)
    fits = ps[d] == 1 || ps[d] == inner[inner.size() - ps.size() + d];
  USER_CHECK(fits) << name << ": " << what << " " << p.name() << " must have the normalized shape "
                   << te::shape_str(inner) << " (or broadcast to it), got " << te::shape_str(ps);
}

}  // namespace

te::Tensor reduce(const te::Tensor& x, ReduceOp op, const std::vector<int64_t>& axes,
                  bool keepdims, const std::string& name) {
  detail::check_numeric(x, name);
  if (op == ReduceOp::Mean) detail::check_float(x, name);
  std::vector<int> ax = normalize_axes(axes, x.ndim(), name);
  Shape out = reduce_shape(x.shape(), ax, keepdims);
  // Nothing to reduce (a 0-d input): every reduction is the identity.
  if (ax.empty())
    return te::compute(out, [&](const std::vector<Var>& o) { return x(detail::exprs(o)); }, name);
  te::ReduceKind kind = op == ReduceOp::Max    ? te::ReduceKind::Max
                        : op == ReduceOp::Min  ? te::ReduceKind::Min
                        : op == ReduceOp::Prod ? te::ReduceKind::Prod
                                               : te::ReduceKind::Sum;
  te::Tensor r = te::compute(
      out,
      [&](const std::vector<Var>& o) {
        std::vector<IterVar> rv = reduce_axes(x.shape(), ax);
        return te::reduce(kind, x(full_index(x.ndim(), ax, o, rv, keepdims)), rv);
      },
      op == ReduceOp::Mean ? name + "_sum" : name, "reduce");
  if (op != ReduceOp::Mean) return r;
  int64_t count = 1;
  for (int d : ax) count *= x.shape()[d];
  return te::compute(
      out,
      [&](const std::vector<Var>& o) {
        return r(detail::exprs(o)) / te::make_const(x.dtype(), double(count));
      },
      name);
}

te::Tensor reduce_sum(const te::Tensor& x, const std::vector<int64_t>& axes, bool keepdims,
                      const std::string& name) {
  return reduce(x, ReduceOp::Sum, axes, keepdims, name);
}
te::Tensor reduce_mean(const te::Tensor& x, const std::vector<int64_t>& axes, bool keepdims,
                       const std::string& name) {
  return reduce(x, ReduceOp::Mean, axes, keepdims, name);
}
te::Tensor reduce_max(const te::Tensor& x, const std::vector<int64_t>& axes, bool keepdims,
                      const std::string& name) {
  return reduce(x, ReduceOp::Max, axes, keepdims, name);
}
te::Tensor reduce_min(const te::Tensor& x, const std::vector<int64_t>& axes, bool keepdims,
                      const std::string& name) {
  return reduce(x, ReduceOp::Min, axes, keepdims, name);
}

te::Tensor softmax(const te::Tensor& x, int64_t axis, const std::string& name) {
  detail::check_float(x, name);
  std::vector<int> ax = {normalize_axis(axis, x.ndim(), name)};
  te::Tensor mx = reduce(x, ReduceOp::Max, {ax[0]}, false, name + "_max");
  te::Tensor e = te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        return te::call(te::Intrinsic::Exp, {x(detail::exprs(i)) - mx(drop_axes(i, ax))});
      },
      name + "_exp");
  te::Tensor s = reduce(e, ReduceOp::Sum, {ax[0]}, false, name + "_sum");
  return te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) { return e(detail::exprs(i)) / s(drop_axes(i, ax)); }, name);
}

te::Tensor log_softmax(const te::Tensor& x, int64_t axis, const std::string& name) {
  detail::check_float(x, name);
  std::vector<int> ax = {normalize_axis(axis, x.ndim(), name)};
  Shape outer = reduce_shape(x.shape(), ax, false);
  te::Tensor mx = reduce(x, ReduceOp::Max, {ax[0]}, false, name + "_max");
  te::Tensor s = te::compute(
      outer,
      [&](const std::vector<Var>& o) {
        std::vector<IterVar> r = reduce_axes(x.shape(), ax);
        Expr v = x(full_index(x.ndim(), ax, o, r, false)) - mx(detail::exprs(o));
        return te::sum(te::call(te::Intrinsic::Exp, {v}), r);
      },
      name + "_sum", "reduce");
  return te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        std::vector<Expr> o = drop_axes(i, ax);
        return x(detail::exprs(i)) - mx(o) - te::call(te::Intrinsic::Log, {s(o)});
      },
      name);
}

te::Tensor layer_norm(const te::Tensor& x, const te::Tensor& gamma, const te::Tensor& beta,
                      const std::vector<int64_t>& axes, double epsilon, const std::string& name,
                      LayerNormStats* stats) {
  detail::check_float(x, name);
  std::vector<int> ax = trailing_axes(axes, x.ndim(), name);
  Shape inner(x.shape().end() - ax.size(), x.shape().end());
  Shape outer = reduce_shape(x.shape(), ax, false);
  USER_CHECK(gamma) << name << ": gamma is required";
  check_norm_param(x, gamma, inner, "scale", name);
  check_norm_param(x, beta, inner, "bias", name);
  double inv_n = 1.0 / double(te::num_elements(inner));
  // Moments of x - k, k the row's first element: the same variance, but the sums are of
  // deviations, not of the values (at mean 1e4 a float32 mean is 1e-3 of a unit deviation
  // off; shifted, 1e-7). x - k is exact for values within a factor 2 of each other.
  auto shifted = [&](std::vector<Expr> idx) {
    Expr v = x(idx);
    for (int a : ax) idx[size_t(a)] = Expr(0);
    return v - x(idx);
  };
  // Mean and variance as sums of pre-scaled terms (a reduction must be the whole body).
  te::Tensor mean = te::compute(
      outer,
      [&](const std::vector<Var>& o) {
        std::vector<IterVar> r = reduce_axes(x.shape(), ax);
        return te::sum(shifted(full_index(x.ndim(), ax, o, r, false)) * Expr(inv_n), r);
      },
      name + "_mean", "reduce");
  te::Tensor var = te::compute(
      outer,
      [&](const std::vector<Var>& o) {
        std::vector<IterVar> r = reduce_axes(x.shape(), ax);
        Expr d = shifted(full_index(x.ndim(), ax, o, r, false)) - mean(detail::exprs(o));
        return te::sum(d * d * Expr(inv_n), r);
      },
      name + "_var", "reduce");
  if (stats) {
    // The mean itself: the shift added back.
    te::Tensor full_mean = te::compute(
        outer,
        [&](const std::vector<Var>& o) {
          std::vector<Expr> first = detail::exprs(o);  // the normalized axes are trailing
          first.resize(size_t(x.ndim()), Expr(0));
          return x(first) + mean(detail::exprs(o));
        },
        name + "_row_mean");
    *stats = {full_mean, var};
  }
  return te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        std::vector<Expr> o = drop_axes(i, ax);
        std::vector<Expr> in(i.end() - ax.size(), i.end());
        Expr v = (shifted(detail::exprs(i)) - mean(o)) *
                 te::call(te::Intrinsic::Rsqrt, {var(o) + Expr(epsilon)}) *
                 gamma(detail::broadcast_index(in, gamma.shape()));
        return beta ? v + beta(detail::broadcast_index(in, beta.shape())) : v;
      },
      name);
}

te::Tensor rms_norm(const te::Tensor& x, const te::Tensor& gamma, const std::vector<int64_t>& axes,
                    double epsilon, const std::string& name) {
  detail::check_float(x, name);
  std::vector<int> ax = trailing_axes(axes, x.ndim(), name);
  Shape inner(x.shape().end() - ax.size(), x.shape().end());
  USER_CHECK(gamma) << name << ": gamma is required";
  check_norm_param(x, gamma, inner, "scale", name);
  double inv_n = 1.0 / double(te::num_elements(inner));
  te::Tensor ms = te::compute(
      reduce_shape(x.shape(), ax, false),
      [&](const std::vector<Var>& o) {
        std::vector<IterVar> r = reduce_axes(x.shape(), ax);
        Expr v = x(full_index(x.ndim(), ax, o, r, false));
        return te::sum(v * v * Expr(inv_n), r);
      },
      name + "_ms", "reduce");
  return te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        std::vector<Expr> in(i.end() - ax.size(), i.end());
        return x(detail::exprs(i)) * te::call(te::Intrinsic::Rsqrt, {ms(drop_axes(i, ax)) + Expr(epsilon)}) *
               gamma(detail::broadcast_index(in, gamma.shape()));
      },
      name);
}

}  // namespace tuner::ops
