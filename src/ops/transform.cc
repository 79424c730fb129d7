#include "ops/transform.h"

#include "ops/op_util.h"

namespace tuner::ops {

using te::Expr;
using te::Var;

te::Tensor transpose(const te::Tensor& x, const std::vector<int64_t>& perm,
                     const std::string& name) {
  Shape out = transpose_shape(x.shape(), perm, name);
  return te::compute(
      out,
      [&](const std::vector<Var>& ax) {
        std::vector<Expr> idx(perm.size());
        for (size_t d = 0; d < perm.size(); ++d) idx[perm[d]] = ax[d];
        return x(idx);
      },
      name);
}

te::Tensor reshape(const te::Tensor& x, const std::vector<int64_t>& to, const std::string& name) {
  const Shape& in = x.shape();
  Shape out = reshape_shape(in, to, name);
  std::vector<int64_t> in_strides(in.size(), 1);
  for (int d = int(in.size()) - 2; d >= 0; --d) in_strides[d] = in_strides[d + 1] * in[d + 1];
  return te::compute(
      out,
      [&](const std::vector<Var>& ax) {
        // Row-major flat position of the output element, then unflattened over `in`.
        // Size-1 dimensions contribute nothing (their index is always 0).
        Expr flat;
        for (size_t d = 0; d < out.size(); ++d)
          if (out[d] != 1) flat = flat ? flat * Expr(out[d]) + ax[d] : Expr(ax[d]);
        if (!flat) flat = Expr(0);
        std::vector<Expr> idx;
        for (size_t d = 0; d < in.size(); ++d) {
          if (in[d] == 1) {
            idx.push_back(0);
            continue;
          }
          Expr e = in_strides[d] == 1 ? flat : te::floordiv(flat, Expr(in_strides[d]));
          if (d > 0) e = te::floormod(e, Expr(in[d]));
          idx.push_back(e);
        }
        return x(idx);
      },
      name);
}

te::Tensor concat(const std::vector<te::Tensor>& inputs, int64_t axis, const std::string& name) {
  USER_CHECK(!inputs.empty()) << name << ": nothing to concatenate";
  int a = normalize_axis(axis, inputs[0].ndim(), name);
  std::vector<Shape> shapes;
  for (auto& t : inputs) {
    detail::check_same_dtype(inputs[0], t, name);
    shapes.push_back(t.shape());
  }
  Shape out = concat_shape(shapes, a, name);
  return te::compute(
      out,
      [&](const std::vector<Var>& ax) {
        std::vector<int64_t> offsets;
        int64_t off = 0;
        for (auto& t : inputs) {
          offsets.push_back(off);
          off += t.shape()[a];
        }
        auto read = [&](size_t i) {
          std::vector<Expr> idx = detail::exprs(ax);
          if (offsets[i]) idx[a] = idx[a] - Expr(offsets[i]);
          return inputs[i](idx);
        };
        // Lazy selects from the last input backwards: only the owning input is read.
        Expr v = read(inputs.size() - 1);
        for (int i = int(inputs.size()) - 2; i >= 0; --i)
          v = te::if_then_else(Expr(ax[a]) < Expr(offsets[i + 1]), read(i), v);
        return v;
      },
      name);
}

te::Tensor pad(const te::Tensor& x, const std::vector<int64_t>& pads, double value,
               const std::string& name) {
  const Shape& in = x.shape();
  Shape out = pad_shape(in, pads, name);
  size_t n = in.size();
  return te::compute(
      out,
      [&](const std::vector<Var>& ax) {
        std::vector<Expr> idx, conds;
        for (size_t d = 0; d < n; ++d) {
          int64_t before = pads[d], after = pads[d + n];
          Expr i = before ? Expr(ax[d]) - Expr(before) : Expr(ax[d]);
          if (before) conds.push_back(Expr(ax[d]) >= Expr(before));
          if (after) conds.push_back(Expr(ax[d]) < Expr(in[d] + before));
          idx.push_back(i);
        }
        Expr cond = detail::all_of(conds);
        if (!cond) return x(idx);
        return te::if_then_else(cond, x(idx), te::make_const(x.dtype(), value));
      },
      name, "pad");
}

te::Tensor slice(const te::Tensor& x, const std::vector<int64_t>& starts,
                 const std::vector<int64_t>& ends, const std::vector<int64_t>& axes,
                 const std::vector<int64_t>& steps, const std::string& name) {
  std::vector<SliceDim> dims = resolve_slice(x.shape(), starts, ends, axes, steps, name);
  Shape out;
  for (auto& d : dims) out.push_back(d.extent);
  return te::compute(
      out,
      [&](const std::vector<Var>& ax) {
        std::vector<Expr> idx;
        for (size_t d = 0; d < dims.size(); ++d) {
          Expr i = detail::scaled(ax[d], dims[d].step);
          idx.push_back(dims[d].start ? Expr(dims[d].start) + i : i);
        }
        return x(idx);
      },
      name);
}

te::Tensor gather(const te::Tensor& data, const te::Tensor& indices, int64_t axis,
                  const std::string& name) {
  int a = normalize_axis(axis, data.ndim(), name);
  USER_CHECK(indices.dtype() == te::DataType::i64() || indices.dtype() == te::DataType::i32())
      << name << ": indices must be int64 or int32, got " << indices.dtype().str();
  Shape out = gather_shape(data.shape(), indices.shape(), a);
  int64_t dim = data.shape()[a];
  int irank = indices.ndim();
  return te::compute(
      out,
      [&](const std::vector<Var>& ax) {
        std::vector<Expr> iidx(ax.begin() + a, ax.begin() + a + irank);
        Expr i = te::cast(te::DataType::i64(), indices(iidx));
        i = te::select(i < Expr(0), i + Expr(dim), i);      // negative indices count from the end
        i = te::min(te::max(i, Expr(0)), Expr(dim - 1));  // never read out of bounds
        std::vector<Expr> idx(ax.begin(), ax.begin() + a);
        idx.push_back(i);
        idx.insert(idx.end(), ax.begin() + a + irank, ax.end());
        return data(idx);
      },
      name);
}

}  // namespace tuner::ops
