#include "ops/transform.h"

#include <array>

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

Expr padded_read(const te::Tensor& x, const std::vector<int64_t>& pads, const std::vector<Expr>& idx,
                 const std::vector<int64_t>& idx_max, double value) {
  return padded_read(x, pads, idx, idx_max, te::make_const(x.dtype(), value));
}

Expr padded_read(const te::Tensor& x, const std::vector<int64_t>& pads,
                 const std::vector<Expr>& idx, const std::vector<int64_t>& idx_max,
                 const Expr& value) {
  const Shape& in = x.shape();
  size_t n = in.size();
  std::vector<Expr> read, conds;
  for (size_t d = 0; d < n; ++d) {
    int64_t before = pads[d];
    read.push_back(before ? idx[d] - Expr(before) : idx[d]);
    if (before) conds.push_back(idx[d] >= Expr(before));
    if (idx_max[d] >= in[d] + before) conds.push_back(idx[d] < Expr(in[d] + before));
  }
  Expr cond = detail::all_of(conds);
  if (!cond) return x(read);
  return te::if_then_else(cond, x(read), value);
}

te::Tensor pad(const te::Tensor& x, const std::vector<int64_t>& pads, double value,
               const std::string& name) {
  return pad_with(x, pads, te::make_const(x.dtype(), value), name);
}

te::Tensor pad_with(const te::Tensor& x, const std::vector<int64_t>& pads, const Expr& value,
                    const std::string& name) {
  Shape out = pad_shape(x.shape(), pads, name);
  std::vector<int64_t> last;
  for (int64_t e : out) last.push_back(e - 1);
  return te::compute(
      out,
      [&](const std::vector<Var>& ax) { return padded_read(x, pads, detail::exprs(ax), last, value); },
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
        Expr i = detail::wrap_index(indices(iidx), dim);
        std::vector<Expr> idx(ax.begin(), ax.begin() + a);
        idx.push_back(i);
        idx.insert(idx.end(), ax.begin() + a + irank, ax.end());
        return data(idx);
      },
      name);
}


te::Tensor expand(const te::Tensor& x, const std::vector<int64_t>& shape, const std::string& name) {
  for (int64_t d : shape)
    USER_CHECK(d >= 1) << name << ": target shape " << te::shape_str(shape)
                       << " must have positive dimensions";
  Shape out = broadcast_shapes({x.shape(), shape}, name);
  return te::compute(
      out,
      [&](const std::vector<Var>& ax) {
        return x(detail::broadcast_index(detail::exprs(ax), x.shape()));
      },
      name);
}

te::Tensor tile(const te::Tensor& x, const std::vector<int64_t>& repeats, const std::string& name) {
  const Shape& in = x.shape();
  Shape out = tile_shape(in, repeats, name);
  return te::compute(
      out,
      [&](const std::vector<Var>& ax) {
        std::vector<Expr> idx;
        for (size_t d = 0; d < in.size(); ++d)
          idx.push_back(in[d] == 1       ? Expr(0)
                        : repeats[d] == 1 ? Expr(ax[d])
                                          : te::floormod(ax[d], Expr(in[d])));
        return x(idx);
      },
      name);
}

namespace {

using Coord = ResizeAttrs::Coord;

// The input coordinate (float32) of output index `o` along an axis of `in` elements resized
// with `scale` to `out`, following ONNX Resize; `valid` gets the in-range condition of
// tf_crop_and_resize. align_corners divides by the output length `out` - 1, as ONNX Runtime
// and PyTorch do (F.interpolate(scale_factor=2.5, align_corners=True) was 0.9 off PyTorch);
// ONNX's reference and two of its node tests take scale x in, which differs when that is not
// whole (5 elements at scale 0.5: coordinates 0 and 4 here, 0 and 2.67 there).
Expr resize_coordinate(const Var& o, int64_t in, int64_t out, double scale, const ResizeAttrs& a,
                       size_t axis, std::vector<Expr>& valid) {
  te::DataType f = te::DataType::f32();
  auto c = [&](double v) { return te::make_const(f, v); };
  Expr x = te::cast(f, o);
  double out_width = scale * double(in);
  switch (a.coord) {
    case Coord::HalfPixel: return (x + c(0.5)) / c(scale) - c(0.5);
    case Coord::PytorchHalfPixel:
      return out_width <= 1 ? c(0) : (x + c(0.5)) / c(scale) - c(0.5);
    case Coord::AlignCorners: return out == 1 ? c(0) : x * c(double(in - 1)) / c(double(out - 1));
    case Coord::Asymmetric: return x / c(scale);
    case Coord::TfHalfPixelForNN: return (x + c(0.5)) / c(scale);
    case Coord::TfCropAndResize: {
      double start = a.roi[axis], end = a.roi[axis + a.scales.size()];
      Expr r = out_width == 1 ? c((end - start) * double(in - 1) / 2)
                              : x * c((end - start) * double(in - 1) / (out_width - 1));
      r = r + c(start * double(in - 1));
      valid.push_back(te::logical_and(r >= c(0), r <= c(double(in - 1))));
      return r;
    }
  }
  INTERNAL_CHECK(false) << "unknown coordinate mode";
  return {};
}

Expr clamp_index(const Expr& i, int64_t in) { return te::min(te::max(i, Expr(0)), Expr(in - 1)); }

Expr floor_f(const Expr& v) { return te::call(te::Intrinsic::Floor, {v}); }
Expr ceil_f(const Expr& v) { return te::call(te::Intrinsic::Ceil, {v}); }

}  // namespace

namespace {

// The cubic kernel's weights of the four taps at floor(x) - 1 ... floor(x) + 2, for t the
// fractional part of x (Keys' kernel with parameter a, as ONNX defines it).
std::array<Expr, 4> cubic_weights(const Expr& t, double a) {
  te::DataType f = te::DataType::f32();
  auto c = [&](double v) { return te::make_const(f, v); };
  auto far = [&](const Expr& s) { return ((c(a) * s - c(5 * a)) * s + c(8 * a)) * s - c(4 * a); };
  auto near = [&](const Expr& s) { return ((c(a + 2) * s - c(a + 3)) * s) * s + c(1); };
  Expr u = c(1) - t;
  return {far(t + c(1)), near(t), near(u), far(u + c(1))};
}

}  // namespace

te::Tensor resize(const te::Tensor& x, const Shape& out, const ResizeAttrs& a,
                  const std::string& name) {
  const Shape& in = x.shape();
  check_resize(in, out, a, name);
  if (a.mode != ResizeAttrs::Mode::Nearest) detail::check_float(x, name);
  te::DataType f = te::DataType::f32(), i64 = te::DataType::i64();
  auto half = te::make_const(f, 0.5);
  return te::compute(
      out,
      [&](const std::vector<Var>& ax) {
        std::vector<Expr> valid;
        // Per axis: the input indices read (one, two for linear, four for cubic) and their
        // weights (none for one index).
        std::vector<std::vector<Expr>> taps(in.size()), weights(in.size());
        for (size_t d = 0; d < in.size(); ++d) {
          if (in[d] == out[d] && a.scales[d] == 1.0 && a.coord != Coord::TfCropAndResize) {
            taps[d] = {ax[d]};  // not resized
            continue;
          }
          Expr xf = resize_coordinate(ax[d], in[d], out[d], a.scales[d], a, d, valid);
          if (a.mode == ResizeAttrs::Mode::Nearest) {
            Expr r;
            switch (a.nearest) {
              case ResizeAttrs::Round::PreferFloor: r = ceil_f(xf - half); break;
              case ResizeAttrs::Round::PreferCeil: r = floor_f(xf + half); break;
              case ResizeAttrs::Round::Floor: r = floor_f(xf); break;
              case ResizeAttrs::Round::Ceil: r = ceil_f(xf); break;
            }
            taps[d] = {clamp_index(te::cast(i64, r), in[d])};
            continue;
          }
          Expr fl = floor_f(xf);
          Expr i0 = te::cast(i64, fl), t = xf - fl;
          if (a.mode == ResizeAttrs::Mode::Linear) {
            taps[d] = {clamp_index(i0, in[d]), clamp_index(i0 + Expr(1), in[d])};
            weights[d] = {te::make_const(f, 1.0) - t, t};
            continue;
          }
          std::array<Expr, 4> w = cubic_weights(t, a.cubic_a);
          Expr sum;
          for (int k = 0; k < 4; ++k) {
            Expr i = i0 + Expr(k - 1);
            taps[d].push_back(clamp_index(i, in[d]));  // outside: the edge value
            if (a.exclude_outside) {  // outside: weight 0, the rest renormalized
              Expr inside = te::logical_and(i >= Expr(0), i < Expr(in[d]));
              w[size_t(k)] = te::select(inside, w[size_t(k)], te::make_const(f, 0));
              sum = sum ? sum + w[size_t(k)] : w[size_t(k)];
            }
          }
          for (int k = 0; k < 4; ++k) weights[d].push_back(sum ? w[size_t(k)] / sum : w[size_t(k)]);
        }
        // Sum over every combination of the axes' taps, each read weighted by the product of
        // its per-axis weights.
        Expr value;
        std::vector<size_t> pick(in.size(), 0);
        for (;;) {
          std::vector<Expr> idx;
          Expr w;
          for (size_t d = 0; d < in.size(); ++d) {
            idx.push_back(taps[d][pick[d]]);
            if (!weights[d].empty()) w = w ? w * weights[d][pick[d]] : weights[d][pick[d]];
          }
          Expr v = x(idx);
          if (w) v = v * (x.dtype() == f ? w : te::cast(x.dtype(), w));
          value = value ? value + v : v;
          size_t d = 0;
          while (d < in.size() && ++pick[d] == taps[d].size()) pick[d++] = 0;
          if (d == in.size()) break;
        }
        if (Expr ok = detail::all_of(valid))
          value = te::select(ok, value, te::make_const(x.dtype(), a.extrapolation_value));
        return value;
      },
      name);
}

}  // namespace tuner::ops
