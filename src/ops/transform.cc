#include "ops/transform.h"

#include <algorithm>
#include <array>
#include <cmath>

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
    case Coord::HalfPixelSymmetric: {
      // The output's whole length against scale x in: the offset splits the difference.
      double offset = double(in) / 2 * (1 - double(out) / out_width);
      return c(offset) + (x + c(0.5)) / c(scale) - c(0.5);
    }
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

Expr f32_const(double v) { return te::make_const(te::DataType::f32(), v); }

// Keys' cubic kernel with parameter a, as ONNX defines it, at distance s: within 1 (near) and
// between 1 and 2 (far).
Expr keys_near(const Expr& s, double a) {
  return ((f32_const(a + 2) * s - f32_const(a + 3)) * s) * s + f32_const(1);
}
Expr keys_far(const Expr& s, double a) {
  return ((f32_const(a) * s - f32_const(5 * a)) * s + f32_const(8 * a)) * s - f32_const(4 * a);
}

// The cubic kernel's weights of the four taps at floor(x) - 1 ... floor(x) + 2, for t the
// fractional part of x.
std::array<Expr, 4> cubic_weights(const Expr& t, double a) {
  Expr u = f32_const(1) - t;
  return {keys_far(t + f32_const(1), a), keys_near(t, a), keys_near(u, a), keys_far(u + f32_const(1), a)};
}

// Weight w of a tap at input index i, or 0 when i is outside [0, in) (exclude_outside).
Expr zero_outside(const Expr& w, const Expr& i, int64_t in) {
  return te::select(te::logical_and(i >= Expr(0), i < Expr(in)), w, f32_const(0));
}

}  // namespace

namespace {

// The input indices one output index `o` of axis d reads (one, two for linear, four for
// cubic) and their weights (none for one index); `valid` gets tf_crop_and_resize's range test.
struct AxisTaps {
  std::vector<Expr> index, weight;
};

// The first tap of an antialiased downsample of `scale` (< 1), relative to floor(x): the
// kernel's half-width (1 linear, 2 cubic) stretched by 1 / scale. The taps run to -first + 1.
int64_t antialias_first_tap(const ResizeAttrs& a, double scale) {
  double reach = a.mode == ResizeAttrs::Mode::Linear ? 1.0 : 2.0;
  return int64_t(std::floor(-reach / scale)) + 1;
}

// Whether axis d's taps are those of the stretched kernel.
bool antialiased(const ResizeAttrs& a, size_t d) {
  return a.antialias && a.mode != ResizeAttrs::Mode::Nearest && a.scales[d] < 1.0;
}

// The taps of axis d an output index reads: 1 nearest, 2 linear, 4 cubic, more antialiased.
size_t tap_count(const ResizeAttrs& a, size_t d) {
  if (antialiased(a, d)) return size_t(2 - 2 * antialias_first_tap(a, a.scales[d]));
  return a.mode == ResizeAttrs::Mode::Nearest ? 1 : a.mode == ResizeAttrs::Mode::Linear ? 2 : 4;
}

// The stretched kernel's weight (before normalization) of the tap at input index i, j taps
// right of floor(x), t the fraction of x: the kernel at (j - t) x scale; 0 outside the input
// with exclude_outside.
Expr antialias_weight(const Expr& j, const Expr& t, const Expr& i, int64_t in, double scale,
                      const ResizeAttrs& a) {
  Expr r = te::call(te::Intrinsic::Fabs, {(j - t) * f32_const(scale)});
  Expr w = a.mode == ResizeAttrs::Mode::Linear
               ? te::max(f32_const(0), f32_const(1) - r)
               : te::select(r <= f32_const(1), keys_near(r, a.cubic_a),
                            te::select(r < f32_const(2), keys_far(r, a.cubic_a), f32_const(0)));
  return a.exclude_outside ? zero_outside(w, i, in) : w;
}

// Antialiased taps at floor(x) + j, weighted by the kernel at (j - t) x scale, t the fraction
// of x, and normalized to sum 1 (with exclude_outside, over the taps inside only), as in
// ONNX's reference. Its taps for a whole x end one further left; both ends weigh 0 there.
AxisTaps antialias_taps(const Expr& i0, const Expr& t, int64_t in, double scale, const ResizeAttrs& a) {
  int64_t first = antialias_first_tap(a, scale);
  AxisTaps taps;
  Expr sum;
  for (int64_t j = first; j <= 1 - first; ++j) {
    Expr i = i0 + Expr(j);
    Expr w = antialias_weight(f32_const(double(j)), t, i, in, scale, a);
    taps.index.push_back(clamp_index(i, in));  // outside: the edge value
    taps.weight.push_back(w);
    sum = sum ? sum + w : w;
  }
  for (Expr& w : taps.weight) w = w / sum;
  return taps;
}

// Above this many taps an axis's taps are a reduction over tables, not unrolled sums: a
// cubic 224 -> 4 downsample (224 taps) took 150 s and 5 GB to compile unrolled.
constexpr size_t kMaxUnrolledTaps = 16;

AxisTaps axis_taps(const Var& o, size_t d, int64_t in, int64_t out, const ResizeAttrs& a,
                   std::vector<Expr>& valid) {
  te::DataType f = te::DataType::f32(), i64 = te::DataType::i64();
  if (in == out && a.scales[d] == 1.0 && a.coord != Coord::TfCropAndResize) return {{o}, {}};
  Expr xf = resize_coordinate(o, in, out, a.scales[d], a, d, valid);
  if (a.mode == ResizeAttrs::Mode::Nearest) {
    Expr half = te::make_const(f, 0.5), r;
    switch (a.nearest) {
      case ResizeAttrs::Round::PreferFloor: r = ceil_f(xf - half); break;
      case ResizeAttrs::Round::PreferCeil: r = floor_f(xf + half); break;
      case ResizeAttrs::Round::Floor: r = floor_f(xf); break;
      case ResizeAttrs::Round::Ceil: r = ceil_f(xf); break;
    }
    return {{clamp_index(te::cast(i64, r), in)}, {}};
  }
  Expr fl = floor_f(xf);
  Expr i0 = te::cast(i64, fl), t = xf - fl;
  if (antialiased(a, d)) return antialias_taps(i0, t, in, a.scales[d], a);
  if (a.mode == ResizeAttrs::Mode::Linear)
    return {{clamp_index(i0, in), clamp_index(i0 + Expr(1), in)}, {te::make_const(f, 1.0) - t, t}};
  AxisTaps taps;
  std::array<Expr, 4> w = cubic_weights(t, a.cubic_a);
  Expr sum;
  for (int k = 0; k < 4; ++k) {
    Expr i = i0 + Expr(k - 1);
    taps.index.push_back(clamp_index(i, in));  // outside: the edge value
    if (a.exclude_outside) {  // outside: weight 0, the rest renormalized
      w[size_t(k)] = zero_outside(w[size_t(k)], i, in);
      sum = sum ? sum + w[size_t(k)] : w[size_t(k)];
    }
  }
  for (int k = 0; k < 4; ++k) taps.weight.push_back(sum ? w[size_t(k)] / sum : w[size_t(k)]);
  return taps;
}

// The resize of `x` to `out` along the given axes at once: the sum over every combination
// of the axes' taps, each read weighted by the product of its per-axis weights.
te::Tensor resize_axes(const te::Tensor& x, const Shape& out, const std::vector<size_t>& axes,
                       const ResizeAttrs& a, const std::string& name, const std::string& tag) {
  te::DataType f = te::DataType::f32();
  const Shape& in = x.shape();
  return te::compute(
      out,
      [&](const std::vector<Var>& ax) {
        std::vector<Expr> valid;
        std::vector<AxisTaps> taps(in.size());
        for (size_t d = 0; d < in.size(); ++d)
          taps[d] = std::find(axes.begin(), axes.end(), d) == axes.end()
                        ? AxisTaps{{ax[d]}, {}}
                        : axis_taps(ax[d], d, in[d], out[d], a, valid);
        Expr value;
        std::vector<size_t> pick(in.size(), 0);
        for (;;) {
          std::vector<Expr> idx;
          Expr w;
          for (size_t d = 0; d < in.size(); ++d) {
            idx.push_back(taps[d].index[pick[d]]);
            if (!taps[d].weight.empty()) w = w ? w * taps[d].weight[pick[d]] : taps[d].weight[pick[d]];
          }
          Expr v = x(idx);
          if (w) v = v * (x.dtype() == f ? w : te::cast(x.dtype(), w));
          value = value ? value + v : v;
          size_t d = 0;
          while (d < in.size() && ++pick[d] == taps[d].index.size()) pick[d++] = 0;
          if (d == in.size()) break;
        }
        if (Expr ok = detail::all_of(valid))
          value = te::select(ok, value, te::make_const(x.dtype(), a.extrapolation_value));
        return value;
      },
      name, tag);
}

// One pass along axis d reading its taps' indices and weights from tables over the output
// index (computed once: the coordinate arithmetic per element was the pass's cost).
te::Tensor resize_axis_tabled(const te::Tensor& x, const Shape& out, size_t d, const ResizeAttrs& a,
                              const std::string& name, const std::string& tag) {
  const Shape& in = x.shape();
  size_t taps = tap_count(a, d);
  std::vector<te::Tensor> index, weight;
  for (size_t k = 0; k < taps; ++k) {
    auto table = [&](bool w) {
      return te::compute(
          {out[d]},
          [&](const std::vector<Var>& ax) {
            std::vector<Expr> valid;  // none: not tf_crop_and_resize
            AxisTaps t = axis_taps(ax[0], d, in[d], out[d], a, valid);
            return w ? t.weight[k] : t.index[k];
          },
          name + (w ? "_w" : "_i") + std::to_string(k), "resize_pass");
    };
    index.push_back(table(false));
    weight.push_back(table(true));
  }
  return te::compute(
      out,
      [&](const std::vector<Var>& ax) {
        Expr value;
        for (size_t k = 0; k < index.size(); ++k) {
          std::vector<Expr> idx(ax.begin(), ax.end());
          idx[d] = index[k](ax[d]);
          Expr v = x(idx) * weight[k](ax[d]);
          value = value ? value + v : v;
        }
        return value;
      },
      name, tag);
}

// One antialiased pass along axis d with many taps: tables [out, taps] of the taps' indices
// and normalized weights, and the pass a sum over the taps (expressions of one tap each).
te::Tensor resize_axis_reduced(const te::Tensor& x, const Shape& out, size_t d, const ResizeAttrs& a,
                               const std::string& name) {
  const Shape& in = x.shape();
  te::DataType f = te::DataType::f32(), i64 = te::DataType::i64();
  int64_t taps = int64_t(tap_count(a, d)), first = antialias_first_tap(a, a.scales[d]);
  auto tap = [&](const Var& o, const Var& k, bool weight) {
    std::vector<Expr> valid;  // none: not tf_crop_and_resize
    Expr xf = resize_coordinate(o, in[d], out[d], a.scales[d], a, d, valid);
    Expr fl = floor_f(xf);
    Expr i = te::cast(i64, fl) + Expr(first) + Expr(k);
    if (!weight) return clamp_index(i, in[d]);
    Expr j = te::cast(f, Expr(k)) + f32_const(double(first));
    return antialias_weight(j, xf - fl, i, in[d], a.scales[d], a);
  };
  auto table = [&](bool weight, const std::string& suffix) {
    return te::compute({out[d], taps}, [&](const std::vector<Var>& ax) { return tap(ax[0], ax[1], weight); },
                       name + suffix, "resize_pass");
  };
  te::Tensor index = table(false, "_i"), raw = table(true, "_wr");
  te::Tensor total = te::compute(
      {out[d]},
      [&](const std::vector<Var>& ax) {
        te::IterVar k = te::reduce_axis(taps, "k");
        return te::sum(raw(ax[0], k.var), {k});
      },
      name + "_ws");
  te::Tensor weight = te::compute(
      {out[d], taps}, [&](const std::vector<Var>& ax) { return raw(ax[0], ax[1]) / total(ax[0]); },
      name + "_w", "resize_pass");
  return te::compute(
      out,
      [&](const std::vector<Var>& ax) {
        te::IterVar k = te::reduce_axis(taps, "k");
        std::vector<Expr> idx(ax.begin(), ax.end());
        idx[d] = index(ax[d], k.var);
        return te::sum(x(idx) * weight(ax[d], k.var), {k});
      },
      name);
}

}  // namespace

te::Tensor resize(const te::Tensor& x, const Shape& out, const ResizeAttrs& a,
                  const std::string& name) {
  const Shape& in = x.shape();
  check_resize(in, out, a, name);
  if (a.mode != ResizeAttrs::Mode::Nearest) detail::check_float(x, name);
  std::vector<size_t> axes;
  for (size_t d = 0; d < in.size(); ++d)
    if (in[d] != out[d] || a.scales[d] != 1.0 || a.coord == Coord::TfCropAndResize) axes.push_back(d);
  // Linear and cubic weights are products of per-axis weights: one pass per axis reads 2 or 4
  // taps instead of 4 or 16 per output, and a pass over a row axis reads whole rows of the
  // previous pass. Intel Sapphire Rapids, bilinear 21x28x28 -> 224x224 2.07 -> 0.43 ms (ONNX
  // Runtime 1.09), bicubic 3x112x112 -> 224x224 0.94 -> 0.24; the innermost axis's taps from
  // tables, a 2x bilinear downsample 1.17x -> 1.05x ONNX Runtime. Not float16 (the passes between
  // would round), nor tf_crop_and_resize (its extrapolated points are the value itself, not a
  // blend).
  bool many_taps = false;
  for (size_t d : axes) many_taps = many_taps || tap_count(a, d) > kMaxUnrolledTaps;
  bool separable = a.mode != ResizeAttrs::Mode::Nearest && a.coord != Coord::TfCropAndResize &&
                   x.dtype() == te::DataType::f32() && (axes.size() > 1 || many_taps);
  if (!separable) return resize_axes(x, out, axes, a, name, "injective");
  // The passes in the order of least work, a pass over the innermost axis counted 4x: its
  // taps differ along the vector, so it gathers (an upsample resizes it first, while the
  // image is small; a 2x downsample last: 64x112x112 -> 56x56 bilinear, W first 0.55 ms, H first 0.38, both
  // at once 0.38).
  auto work = [&](const std::vector<size_t>& order) {
    Shape s = in;
    double w = 0;
    for (size_t d : order) {
      s[d] = out[d];
      w += double(te::num_elements(s)) * (d + 1 == in.size() ? 4 : 1);
    }
    return w;
  };
  std::vector<size_t> order = axes;
  while (std::next_permutation(axes.begin(), axes.end()))
    if (work(axes) < work(order)) order = axes;
  axes = order;
  te::Tensor t = x;
  for (size_t i = 0; i < axes.size(); ++i) {
    Shape s = t.shape();
    s[axes[i]] = out[axes[i]];
    bool last = i + 1 == axes.size();
    std::string n = last ? name : name + "_axis" + std::to_string(axes[i]);
    const char* tag = last ? "injective" : "resize_pass";
    if (tap_count(a, axes[i]) > kMaxUnrolledTaps) t = resize_axis_reduced(t, s, axes[i], a, n);
    else if (axes[i] + 1 == in.size()) t = resize_axis_tabled(t, s, axes[i], a, n, tag);
    else t = resize_axes(t, s, {axes[i]}, a, n, tag);
  }
  return t;
}

}  // namespace tuner::ops
