// Shape and data movement: Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Concat, Split,
// Slice, Gather, GatherElements, Pad, Expand, Tile, Resize, Shape, Constant, ConstantOfShape,
// Range, Size, GatherND, ScatterND, ScatterElements, DepthToSpace, SpaceToDepth, Trilu,
// OneHot.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "graph/converters_impl.h"
#include "ops/elementwise.h"
#include "ops/op_util.h"
#include "ops/transform.h"

namespace tuner::graph::detail {

namespace {

std::vector<ConvertOutput> reshape(const ConvertContext& c) {
  const te::Tensor& x = c.input(0);
  std::vector<int64_t> to = c.constant_ints(1, "shape");
  bool allow_zero = c.attr_int("allowzero", 0) != 0;
  for (size_t d = 0; d < to.size(); ++d) {
    if (to[d] != 0 || allow_zero) continue;
    if (d >= x.shape().size()) c.fail("shape entry 0 at position " + std::to_string(d) +
                              " has no input dimension to copy");
    to[d] = x.shape()[d];
  }
  return one(ops::reshape(x, to, c.name()));
}

std::vector<ConvertOutput> flatten(const ConvertContext& c) {
  const te::Tensor& x = c.input(0);
  int64_t axis = c.attr_int("axis", 1);
  if (axis < 0) axis += int64_t(x.ndim());
  if (axis < 0 || axis > int64_t(x.ndim())) c.fail("axis out of range");
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < int64_t(x.ndim()); ++d) (d < axis ? outer : inner) *= x.shape()[size_t(d)];
  return one(ops::reshape(x, {outer, inner}, c.name()));
}

std::vector<ConvertOutput> transpose(const ConvertContext& c) {
  const te::Tensor& x = c.input(0);
  std::vector<int64_t> perm;
  for (int64_t d = int64_t(x.ndim()) - 1; d >= 0; --d) perm.push_back(d);
  return one(ops::transpose(x, c.attr_ints("perm", perm), c.name()));
}

// Squeeze/Unsqueeze axes: an attribute before opset 13, the second input from 13 on.
std::vector<int64_t> axes_of(const ConvertContext& c) {
  if (c.opset() >= 13) return c.has_input(1) ? c.constant_ints(1, "axes") : std::vector<int64_t>{};
  return c.attr_ints("axes", {});
}

std::vector<ConvertOutput> squeeze(const ConvertContext& c) {
  const te::Tensor& x = c.input(0);
  std::vector<int64_t> axes = axes_of(c);
  std::vector<bool> drop(x.shape().size(), false);
  if (axes.empty()) {
    for (size_t d = 0; d < x.shape().size(); ++d) drop[d] = x.shape()[d] == 1;
  } else {
    for (int64_t a : axes) {
      int d = ops::normalize_axis(a, int(x.ndim()), c.name());
      if (x.shape()[size_t(d)] != 1)
        c.fail("cannot squeeze axis " + std::to_string(a) + " of size " +
               std::to_string(x.shape()[size_t(d)]));
      drop[size_t(d)] = true;
    }
  }
  ops::Shape s;
  for (size_t d = 0; d < x.shape().size(); ++d)
    if (!drop[d]) s.push_back(x.shape()[d]);
  return one(ops::reshape(x, s, c.name()));
}

std::vector<ConvertOutput> unsqueeze(const ConvertContext& c) {
  const te::Tensor& x = c.input(0);
  std::vector<int64_t> axes = axes_of(c);
  int rank = int(x.ndim() + axes.size());
  std::vector<bool> added(size_t(rank), false);
  for (int64_t a : axes) {
    int d = ops::normalize_axis(a, rank, c.name());
    if (added[size_t(d)]) c.fail("axis " + std::to_string(a) + " repeated");
    added[size_t(d)] = true;
  }
  ops::Shape s;
  size_t src = 0;
  for (int d = 0; d < rank; ++d) s.push_back(added[size_t(d)] ? 1 : x.shape()[src++]);
  return one(ops::reshape(x, s, c.name()));
}

std::vector<ConvertOutput> concat(const ConvertContext& c) {
  std::vector<te::Tensor> xs;
  for (size_t i = 0; i < c.num_inputs(); ++i)
    if (!c.empty_constant(i)) xs.push_back(c.input(i));  // adds nothing
  if (xs.empty()) return {ops::HostTensor({0}, c.input_value(0).dtype)};
  return one(ops::concat(xs, c.attr("axis").i, c.name()));
}

// Split: sizes from the `split` attribute (before opset 13) or input; equal parts otherwise.
std::vector<ConvertOutput> split(const ConvertContext& c) {
  const te::Tensor& x = c.input(0);
  int axis = ops::normalize_axis(c.attr_int("axis", 0), x.ndim(), c.name());
  std::vector<int64_t> sizes = c.attr_ints("split", {});
  if (c.opset() >= 13)
    sizes = c.has_input(1) ? c.constant_ints(1, "split") : std::vector<int64_t>{};
  int64_t dim = x.shape()[size_t(axis)], n = int64_t(c.node().outputs.size());
  if (sizes.empty() && c.has_attr("num_outputs")) {  // opset 18: the last part may be smaller
    if (c.attr_int("num_outputs", 0) != n) c.fail("num_outputs differs from the outputs listed");
    int64_t part = (dim + n - 1) / n;
    for (int64_t i = 0; i < n; ++i) sizes.push_back(std::min(part, dim - i * part));
  }
  if (sizes.empty()) {
    if (dim % n) c.fail("cannot split " + std::to_string(dim) + " into " + std::to_string(n) +
                        " equal parts");
    sizes.assign(size_t(n), dim / n);
  }
  if (int64_t(sizes.size()) != n)
    c.fail(std::to_string(sizes.size()) + " split sizes for " + std::to_string(n) + " outputs");
  std::vector<ConvertOutput> out;
  int64_t start = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] <= 0) c.fail("split sizes must be positive (empty tensors are not supported)");
    out.push_back(ops::slice(x, {start}, {start + sizes[i]}, {axis}, {},
                             c.name(std::to_string(i))));
    start += sizes[i];
  }
  if (start != dim)
    c.fail("split sizes add up to " + std::to_string(start) + ", the axis has " +
           std::to_string(dim));
  return out;
}

std::vector<ConvertOutput> slice(const ConvertContext& c) {
  const te::Tensor& x = c.input(0);
  if (c.opset() < 10)
    return one(ops::slice(x, c.attr("starts").ints, c.attr("ends").ints, c.attr_ints("axes", {}),
                          {}, c.name()));
  std::vector<int64_t> axes, steps;
  if (c.has_input(3)) axes = c.constant_ints(3, "axes");
  if (c.has_input(4)) steps = c.constant_ints(4, "steps");
  std::vector<int64_t> starts = c.constant_ints(1, "starts"), ends = c.constant_ints(2, "ends");
  // Shape arithmetic may slice a constant shape to nothing (x.shape[2:] of a matrix, which a
  // Concat then drops; swin_t): an empty constant, which only Concat takes.
  if (c.input_value(0).is_constant() && x.ndim() == 1) {
    auto dims = ops::resolve_slice(x.shape(), starts, ends, axes, steps, c.name(), true);
    if (dims[0].extent == 0) return {ops::HostTensor({0}, x.dtype())};
  }
  return one(ops::slice(x, starts, ends, axes, steps, c.name()));
}

// Constant indices are checked here: ONNX makes an out-of-range index an error, and the
// kernels would otherwise clamp it silently. `dim_of(k)` is the bound of flat element k.
void check_constant_indices(const ConvertContext& c) {
  const Value& v = c.input_value(1);
  if (!v.is_constant() || !v.data->dtype.is_integer()) return;
  std::vector<int64_t> limits = index_limits(c.graph(), c.node());
  if (limits.empty()) return;
  for (int64_t k = 0; k < v.data->num_elements(); ++k) {
    int64_t i = v.data->get_int(k), dim = limits[size_t(k) % limits.size()];
    if (i < -dim || i >= dim)
      c.fail("index " + std::to_string(i) + " (element " + std::to_string(k) +
             " of the constant indices) is out of range for a dimension of size " +
             std::to_string(dim));
  }
}

std::vector<ConvertOutput> gather(const ConvertContext& c) {
  const te::Tensor& data = c.input(0);
  int a = ops::normalize_axis(c.attr_int("axis", 0), int(data.ndim()), c.name());
  check_constant_indices(c);
  return one(ops::gather(data, c.input(1), a, c.name()));
}

// Pad's edge, reflect and wrap modes: each output index maps to an input index along every
// dimension (edge: the nearest; reflect: mirrored about the border, which is not repeated;
// wrap, opset 19: the input repeated, as numpy.pad's wrap).
te::Tensor pad_by_index(const ConvertContext& c, const te::Tensor& x,
                        const std::vector<int64_t>& pads, const std::string& mode) {
  const ops::Shape& in = x.shape();
  size_t n = in.size();
  bool reflect = mode == "reflect";
  ops::Shape out;
  for (size_t d = 0; d < n; ++d) {
    if (reflect && (pads[d] >= in[d] || pads[d + n] >= in[d]))
      c.fail("reflect pads must be smaller than the dimension they pad");
    out.push_back(in[d] + pads[d] + pads[d + n]);
  }
  return te::compute(
      out,
      [&](const std::vector<te::Var>& ax) {
        std::vector<te::Expr> idx;
        for (size_t d = 0; d < n; ++d) {
          te::Expr i = te::Expr(ax[d]) - te::Expr(pads[d]), last(in[d] - 1);
          if (reflect)
            i = te::select(i < te::Expr(0), te::Expr(0) - i,
                           te::select(i > last, last * te::Expr(2) - i, i));
          else if (mode == "wrap")  // a multiple of the size added keeps the operand >= 0
            i = te::floormod(te::Expr(ax[d]) + te::Expr(in[d] - pads[d] % in[d]), te::Expr(in[d]));
          else
            i = te::min(te::max(i, te::Expr(0)), last);
          idx.push_back(i);
        }
        return x(idx);
      },
      c.name());
}

std::vector<ConvertOutput> pad(const ConvertContext& c) {
  const te::Tensor& x = c.input(0);
  std::string mode = c.attr_string("mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect" && (mode != "wrap" || c.opset() < 19))
    c.fail("pad mode '" + mode + "' is not supported" + (mode == "wrap" ? " before opset 19" : ""));
  std::vector<int64_t> pads;
  te::DataType t = x.dtype();
  te::Expr value = te::make_const(t, 0);
  if (c.opset() < 11) {
    pads = c.attr("pads").ints;
    value = te::make_const(t, c.attr_float("value", 0.0));
  } else {
    pads = c.constant_ints(1, "pads");
    if (c.has_input(2)) {  // an integer as an integer: through a double, 2^53 + 1 became 2^53
      const ops::HostTensor& v = c.constant(2, "constant_value");
      value = t.is_float() ? te::make_const(t, v.get(0)) : te::make_int(v.get_int(0), t);
    }
    if (c.has_input(3)) {  // opset 18: pads for these axes only
      // In the listed order, which the pads follow (normalize_axes sorts).
      std::vector<int64_t> axes = c.constant_ints(3, "axes");
      if (pads.size() != 2 * axes.size()) c.fail("pads must hold two values per listed axis");
      std::vector<int64_t> full(2 * x.ndim(), 0);
      std::vector<bool> seen(x.ndim(), false);
      for (size_t i = 0; i < axes.size(); ++i) {
        size_t d = size_t(ops::normalize_axis(axes[i], int(x.ndim()), c.name()));
        if (seen[d]) c.fail("axis " + std::to_string(axes[i]) + " is listed twice");
        seen[d] = true;
        full[d] = pads[i];
        full[d + x.ndim()] = pads[i + axes.size()];
      }
      pads = full;
    }
  }
  for (int64_t p : pads)
    if (p < 0) c.fail("negative pads are not supported");
  if (pads.size() != 2 * size_t(x.ndim())) c.fail("pads must hold two values per dimension");
  if (mode != "constant") return one(pad_by_index(c, x, pads, mode));
  return one(ops::pad_with(x, pads, value, c.name()));
}

ops::ResizeAttrs::Coord resize_coord(const ConvertContext& c) {
  using Coord = ops::ResizeAttrs::Coord;
  std::string s = c.attr_string("coordinate_transformation_mode", "half_pixel");
  if (s == "half_pixel") return Coord::HalfPixel;
  if (s == "pytorch_half_pixel") return Coord::PytorchHalfPixel;
  if (s == "align_corners") return Coord::AlignCorners;
  if (s == "asymmetric") return Coord::Asymmetric;
  if (s == "tf_half_pixel_for_nn") return Coord::TfHalfPixelForNN;
  if (s == "tf_crop_and_resize") return Coord::TfCropAndResize;
  if (s == "half_pixel_symmetric") {
    if (c.opset() < 19) c.fail("coordinate_transformation_mode '" + s + "' needs opset 19");
    return Coord::HalfPixelSymmetric;
  }
  c.fail("unknown coordinate_transformation_mode '" + s + "'");
}

ops::ResizeAttrs::Round resize_rounding(const ConvertContext& c) {
  using Round = ops::ResizeAttrs::Round;
  std::string s = c.attr_string("nearest_mode", "round_prefer_floor");
  if (s == "round_prefer_floor") return Round::PreferFloor;
  if (s == "round_prefer_ceil") return Round::PreferCeil;
  if (s == "floor") return Round::Floor;
  if (s == "ceil") return Round::Ceil;
  c.fail("unknown nearest_mode '" + s + "'");
}

// Resize (opset 11-17): inputs X, roi, scales, sizes; an empty scales tensor means absent.
std::vector<ConvertOutput> resize(const ConvertContext& c) {
  const te::Tensor& x = c.input(0);
  const ops::Shape& in = x.shape();
  ops::ResizeAttrs a;
  std::string mode = c.attr_string("mode", "nearest");
  if (mode == "linear") a.mode = ops::ResizeAttrs::Mode::Linear;
  else if (mode == "cubic") a.mode = ops::ResizeAttrs::Mode::Cubic;
  else if (mode != "nearest") c.fail("unknown mode '" + mode + "'");
  a.cubic_a = c.attr_float("cubic_coeff_a", -0.75);
  a.exclude_outside = c.attr_int("exclude_outside", 0) != 0;
  a.coord = resize_coord(c);
  a.nearest = resize_rounding(c);
  a.antialias = c.attr_int("antialias", 0) != 0;
  a.extrapolation_value = c.attr_float("extrapolation_value", 0.0);
  // Opset 18: scales, sizes and roi may cover only the listed axes.
  size_t rank = in.size();
  std::vector<int> axes;
  if (c.has_attr("axes"))  // in the given order: scales, sizes and roi follow it
    for (int64_t ax : c.attr_ints("axes", {})) axes.push_back(ops::normalize_axis(ax, int(rank), c.name()));
  else
    for (size_t d = 0; d < rank; ++d) axes.push_back(int(d));
  size_t na = axes.size();
  if (a.coord == ops::ResizeAttrs::Coord::TfCropAndResize) {
    const ops::HostTensor& roi = c.constant(1, "roi");
    if (roi.num_elements() != int64_t(2 * na)) c.fail("roi must hold a start and an end per axis");
    a.roi.assign(rank, 0.0);
    a.roi.resize(2 * rank, 1.0);
    for (size_t i = 0; i < na; ++i) {
      a.roi[size_t(axes[i])] = roi.get(int64_t(i));
      a.roi[size_t(axes[i]) + rank] = roi.get(int64_t(i + na));
    }
  }
  bool has_scales = c.has_input(2) && c.constant(2, "scales").num_elements() > 0;
  bool has_sizes = c.has_input(3);
  if (has_scales == has_sizes) c.fail("exactly one of scales and sizes must be given");
  ops::Shape out = in;
  a.scales.assign(rank, 1.0);
  if (has_scales) {
    const ops::HostTensor& sc = c.constant(2, "scales");
    if (sc.num_elements() != int64_t(na)) c.fail("scales must have one value per axis");
    for (size_t i = 0; i < na; ++i) {
      size_t d = size_t(axes[i]);
      a.scales[d] = sc.get(int64_t(i));
      // In float32, as ONNX's shape inference and ONNX Runtime compute it: 3 x float(7/3)
      // rounds to 7 there, and floors to 6 in double.
      out[d] = int64_t(std::floor(float(in[d]) * float(a.scales[d])));
    }
  } else {
    std::vector<int64_t> sizes = c.constant_ints(3, "sizes");
    if (sizes.size() != na) c.fail("sizes must have one value per axis");
    std::string policy = c.attr_string("keep_aspect_ratio_policy", "stretch");
    if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
      c.fail("unknown keep_aspect_ratio_policy '" + policy + "'");
    // not_larger / not_smaller: one scale for every listed axis, the smallest or largest.
    double keep = policy == "not_larger" ? 1e300 : 0;
    for (size_t i = 0; i < na; ++i) {
      double r = double(sizes[i]) / double(in[size_t(axes[i])]);
      keep = policy == "not_larger" ? std::min(keep, r) : std::max(keep, r);
    }
    for (size_t i = 0; i < na; ++i) {
      size_t d = size_t(axes[i]);
      if (policy == "stretch") {
        out[d] = sizes[i];
        a.scales[d] = double(sizes[i]) / double(in[d]);
      } else {
        out[d] = int64_t(std::round(double(in[d]) * keep));
        a.scales[d] = keep;
      }
    }
  }
  return one(ops::resize(x, out, a, c.name()));
}

// Range: start, limit and delta are constants, so the result is too.
std::vector<ConvertOutput> range(const ConvertContext& c) {
  const ops::HostTensor& start = c.constant(0, "start");
  const ops::HostTensor& limit = c.constant(1, "limit");
  const ops::HostTensor& delta = c.constant(2, "delta");
  for (const ops::HostTensor* t : {&start, &limit, &delta})
    if (t->num_elements() != 1) c.fail("start, limit and delta must be scalars");
  te::DataType t = start.dtype;
  if (limit.dtype != t || delta.dtype != t) c.fail("start, limit and delta must share a type");
  double s = start.get(0), d = delta.get(0);
  if (d == 0) c.fail("delta must not be 0");
  int64_t n = 0;
  if (t.is_float()) {
    n = std::max<int64_t>(0, int64_t(std::ceil((limit.get(0) - s) / d)));
  } else {  // in integers: above 2^53 a double loses the last units
    int64_t a = start.get_int(0), b = limit.get_int(0), k = delta.get_int(0);
    __int128 span = __int128(b) - a;
    __int128 q = span / k + ((span % k != 0 && (span < 0) == (k < 0)) ? 1 : 0);  // ceil
    n = int64_t(std::clamp<__int128>(q, 0, INT64_MAX));
  }
  if (n == 0) c.fail("the range is empty (empty tensors are not supported)");
  ops::HostTensor out({n}, t);
  for (int64_t i = 0; i < n; ++i) {
    if (t.is_float()) out.set(i, s + double(i) * d);
    else out.set_int(i, start.get_int(0) + i * delta.get_int(0));
  }
  return {std::move(out)};
}

std::vector<ConvertOutput> shape(const ConvertContext& c) {
  const ops::Shape& s = c.input_value(0).shape;
  int64_t rank = int64_t(s.size());
  int64_t start = c.attr_int("start", 0), end = c.attr_int("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  std::vector<double> dims(s.begin() + start, s.begin() + end);
  return {ops::HostTensor::from_values({end - start}, te::DataType::i64(), dims)};
}

std::vector<ConvertOutput> constant(const ConvertContext& c) {
  const Node& n = c.node();
  if (n.attrs.size() != 1) c.fail("needs exactly one value attribute");
  const auto& [key, a] = *n.attrs.begin();
  if (key == "value") return {ops::HostTensor(*a.tensor)};
  if (key == "value_float") return {ops::HostTensor::from_values({}, te::DataType::f32(), {a.f})};
  if (key == "value_int")
    return {ops::HostTensor::from_values({}, te::DataType::i64(), {double(a.i)})};
  if (key == "value_floats")
    return {ops::HostTensor::from_values({int64_t(a.floats.size())}, te::DataType::f32(), a.floats)};
  if (key == "value_ints") {
    std::vector<double> v(a.ints.begin(), a.ints.end());
    return {ops::HostTensor::from_values({int64_t(v.size())}, te::DataType::i64(), v)};
  }
  c.fail("value attribute '" + key + "' is not supported");
}

std::vector<ConvertOutput> constant_of_shape(const ConvertContext& c) {
  std::vector<int64_t> s = c.constant_ints(0, "shape");
  for (int64_t d : s)
    if (d < 0) c.fail("negative dimension in shape");
  // Zeros of float32 without a value; integers copied as integers (exact above 2^53).
  const ops::HostTensor* val = c.has_attr("value") ? c.attr("value").tensor.get() : nullptr;
  if (val && val->num_elements() != 1) c.fail("value must hold one element");
  ops::HostTensor out(s, val ? val->dtype : te::DataType::f32());
  for (int64_t i = 0; val && i < out.num_elements(); ++i) {
    if (val->dtype.is_float()) out.set(i, val->get(0));
    else out.set_int(i, val->get_int(0));
  }
  return {std::move(out)};
}

using te::Expr;
using te::Var;

// DepthToSpace: out[n, c, h*b + i, w*b + j] reads channel (i*b + j) * C' + c (DCR) or
// c*b*b + i*b + j (CRD), C' = C / b^2.
std::vector<ConvertOutput> depth_to_space(const ConvertContext& c) {
  const te::Tensor& x = c.input(0);
  int64_t b = c.attr("blocksize").i;
  std::string mode = c.attr_string("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") c.fail("mode must be DCR or CRD, got '" + mode + "'");
  if (x.ndim() != 4 || b < 1 || x.shape()[1] % (b * b) != 0)
    c.fail("input must be [N, C, H, W] with C a multiple of blocksize^2");
  int64_t ch = x.shape()[1] / (b * b);
  Expr eb(b);
  return one(te::compute(
      {x.shape()[0], ch, x.shape()[2] * b, x.shape()[3] * b},
      [&](const std::vector<Var>& o) {
        Expr i = te::floormod(o[2], eb), j = te::floormod(o[3], eb);
        Expr in = mode == "DCR" ? (i * eb + j) * Expr(ch) + o[1] : o[1] * Expr(b * b) + i * eb + j;
        return x(o[0], in, te::floordiv(o[2], eb), te::floordiv(o[3], eb));
      },
      c.name()));
}

// SpaceToDepth: out[n, (i*b + j)*C + c, h, w] = x[n, c, h*b + i, w*b + j].
std::vector<ConvertOutput> space_to_depth(const ConvertContext& c) {
  const te::Tensor& x = c.input(0);
  int64_t b = c.attr("blocksize").i;
  if (x.ndim() != 4 || b < 1 || x.shape()[2] % b != 0 || x.shape()[3] % b != 0)
    c.fail("input must be [N, C, H, W] with H and W multiples of blocksize");
  int64_t ch = x.shape()[1];
  Expr eb(b);
  return one(te::compute(
      {x.shape()[0], ch * b * b, x.shape()[2] / b, x.shape()[3] / b},
      [&](const std::vector<Var>& o) {
        Expr ij = te::floordiv(o[1], Expr(ch));
        return x(o[0], te::floormod(o[1], Expr(ch)), o[2] * eb + te::floordiv(ij, eb),
                 o[3] * eb + te::floormod(ij, eb));
      },
      c.name()));
}

// GatherElements: out[idx] = data[idx with idx[axis] = indices[idx]].
std::vector<ConvertOutput> gather_elements(const ConvertContext& c) {
  const te::Tensor &data = c.input(0), &ind = c.input(1);
  int axis = ops::normalize_axis(c.attr_int("axis", 0), int(data.ndim()), c.name());
  if (ind.ndim() != data.ndim()) c.fail("indices must have the rank of data");
  if (ind.dtype() != te::DataType::i64() && ind.dtype() != te::DataType::i32())
    c.fail("indices must be int64 or int32");
  int64_t dim = data.shape()[size_t(axis)];
  check_constant_indices(c);
  return one(te::compute(
      ind.shape(),
      [&](const std::vector<Var>& o) {
        return data(ops::detail::with_axis(o, size_t(axis), ops::detail::wrap_index(ind(ops::detail::exprs(o)), dim)));
      },
      c.name()));
}

// GatherND: out[i..., rest...] = data[b..., indices[i..., 0..k), rest...], where the
// first batch_dims dimensions b of indices and data correspond.
std::vector<ConvertOutput> gather_nd(const ConvertContext& c) {
  const te::Tensor &data = c.input(0), &ind = c.input(1);
  int64_t b = c.attr_int("batch_dims", 0);
  int64_t q = int64_t(ind.ndim()), r = int64_t(data.ndim());
  if (ind.dtype() != te::DataType::i64()) c.fail("indices must be int64");
  if (q < 1 || b < 0 || b >= q || b >= r) c.fail("batch_dims must be below both ranks");
  int64_t k = ind.shape().back();
  if (k < 1 || b + k > r) c.fail("indices' last dimension must be in [1, rank(data) - batch_dims]");
  for (int64_t d = 0; d < b; ++d)
    if (ind.shape()[size_t(d)] != data.shape()[size_t(d)]) c.fail("batch dimensions differ");
  check_constant_indices(c);
  ops::Shape out(ind.shape().begin(), ind.shape().end() - 1);
  out.insert(out.end(), data.shape().begin() + b + k, data.shape().end());
  return one(te::compute(
      out,
      [&](const std::vector<Var>& o) {
        std::vector<Expr> di(o.begin(), o.begin() + b);
        std::vector<Expr> ii(o.begin(), o.begin() + (q - 1));
        for (int64_t j = 0; j < k; ++j) {
          std::vector<Expr> at = ii;
          at.push_back(Expr(j));
          di.push_back(ops::detail::wrap_index(ind(at), data.shape()[size_t(b + j)]));
        }
        di.insert(di.end(), o.begin() + (q - 1), o.end());
        return data(di);
      },
      c.name()));
}

// Scatter as a gather: each output element looks at every candidate update (one reduction
// axis per candidate dimension) and either takes the last one naming it (reduction 'none';
// else it keeps data) or combines data with all of them (add, mul, max, min). Quadratic:
// output size times candidates, which suits the index updates models make.
struct ScatterSpec {
  std::vector<int64_t> candidates;  // extents of the candidate axes
  // Whether candidate `j` names output element `o`, and that candidate's value for it.
  std::function<Expr(const std::vector<Var>& o, const std::vector<Expr>& j)> names, value;
};

te::Tensor scatter(const ConvertContext& c, const te::Tensor& data, const ScatterSpec& spec) {
  std::string red = c.attr_string("reduction", "none");
  te::DataType t = data.dtype();
  auto make_axes = [&] {
    std::vector<te::IterVar> r;
    for (size_t i = 0; i < spec.candidates.size(); ++i)
      r.push_back(te::reduce_axis(spec.candidates[i], "j" + std::to_string(i)));
    return r;
  };
  auto vars = [](const std::vector<te::IterVar>& r) {
    std::vector<Expr> v;
    for (const auto& iv : r) v.push_back(iv.var);
    return v;
  };
  if (red == "none") {
    // The last candidate naming the element, as one flat number (-1: none).
    te::Tensor which = te::compute(
        data.shape(),
        [&](const std::vector<Var>& o) {
          std::vector<te::IterVar> r = make_axes();
          Expr flat;
          for (size_t i = 0; i < r.size(); ++i)
            flat = flat ? flat * Expr(spec.candidates[i]) + Expr(r[i].var) : Expr(r[i].var);
          return te::reduce(te::ReduceKind::Max,
                            te::select(spec.names(o, vars(r)), flat, Expr(int64_t(-1))), r);
        },
        c.name("which"), "reduce");
    return te::compute(
        data.shape(),
        [&](const std::vector<Var>& o) {
          Expr w = which(ops::detail::exprs(o)), rest = te::max(w, Expr(0));
          std::vector<Expr> j(spec.candidates.size());
          for (size_t i = spec.candidates.size(); i-- > 0;) {
            j[i] = te::floormod(rest, Expr(spec.candidates[i]));
            rest = te::floordiv(rest, Expr(spec.candidates[i]));
          }
          return te::select(w >= Expr(0), spec.value(o, j), data(ops::detail::exprs(o)));
        },
        c.name());
  }
  static const std::map<std::string, te::ReduceKind> kinds = {{"add", te::ReduceKind::Sum},
                                                             {"mul", te::ReduceKind::Prod},
                                                             {"max", te::ReduceKind::Max},
                                                             {"min", te::ReduceKind::Min}};
  auto found = kinds.find(red);
  if (found == kinds.end()) c.fail("unknown reduction '" + red + "'");
  te::ReduceKind kind = found->second;
  te::Tensor acc = te::compute(
      data.shape(),
      [&](const std::vector<Var>& o) {
        std::vector<te::IterVar> r = make_axes();
        std::vector<Expr> j = vars(r);
        return te::reduce(kind, te::select(spec.names(o, j), spec.value(o, j), te::reduce_identity(kind, t)), r);
      },
      c.name("acc"), "reduce");
  return ops::map_binary(
      data, acc,
      [&](const Expr& d, const Expr& u) {
        switch (kind) {
          case te::ReduceKind::Sum: return d + u;
          case te::ReduceKind::Prod: return d * u;
          case te::ReduceKind::Max: return te::max(d, u);
          case te::ReduceKind::Min: return te::min(d, u);
        }
        return d;
      },
      c.name());
}

// ScatterND: out = data, then out[indices[j]] = (or combined with) updates[j], per index tuple.
std::vector<ConvertOutput> scatter_nd(const ConvertContext& c) {
  const te::Tensor &data = c.input(0), &ind = c.input(1), &upd = c.input(2);
  if (ind.dtype() != te::DataType::i64()) c.fail("indices must be int64");
  int64_t k = ind.shape().back();
  if (k < 1 || k > int64_t(data.ndim())) c.fail("indices' last dimension must be in [1, rank(data)]");
  ops::Shape want(ind.shape().begin(), ind.shape().end() - 1);
  want.insert(want.end(), data.shape().begin() + k, data.shape().end());
  if (upd.shape() != want || upd.dtype() != data.dtype())
    c.fail("updates must be " + data.dtype().str() + " " + te::shape_str(want));
  check_constant_indices(c);
  ScatterSpec spec;
  spec.candidates.assign(ind.shape().begin(), ind.shape().end() - 1);
  spec.names = [&](const std::vector<Var>& o, const std::vector<Expr>& j) {
    std::vector<Expr> eqs;
    for (int64_t d = 0; d < k; ++d) {
      std::vector<Expr> at = j;
      at.push_back(Expr(d));
      eqs.push_back(te::eq(ops::detail::wrap_index(ind(at), data.shape()[size_t(d)]), Expr(o[size_t(d)])));
    }
    return ops::detail::all_of(eqs);
  };
  spec.value = [&](const std::vector<Var>& o, const std::vector<Expr>& j) {
    std::vector<Expr> at = j;
    at.insert(at.end(), o.begin() + k, o.end());
    return upd(at);
  };
  return one(scatter(c, data, spec));
}

// ScatterElements: out = data, then out[i with i[axis] = indices[i]] = (or combined with)
// updates[i], for every position i of indices.
std::vector<ConvertOutput> scatter_elements(const ConvertContext& c) {
  const te::Tensor &data = c.input(0), &ind = c.input(1), &upd = c.input(2);
  if (ind.dtype() != te::DataType::i64() && ind.dtype() != te::DataType::i32())
    c.fail("indices must be int64 or int32");
  if (upd.shape() != ind.shape() || upd.dtype() != data.dtype() || ind.ndim() != data.ndim())
    c.fail("updates must have the shape of indices and the type of data, indices data's rank");
  int axis = ops::normalize_axis(c.attr_int("axis", 0), int(data.ndim()), c.name());
  for (size_t d = 0; d < size_t(ind.ndim()); ++d)
    if (ind.shape()[d] > data.shape()[d]) c.fail("indices must not be larger than data");
  check_constant_indices(c);
  // Candidates run along the axis; the other coordinates are the output element's own.
  auto at = [&](const std::vector<Var>& o, const Expr& r) {
    std::vector<Expr> p;
    for (size_t d = 0; d < size_t(ind.ndim()); ++d)
      p.push_back(int(d) == axis ? r : te::min(Expr(o[d]), Expr(ind.shape()[d] - 1)));
    return p;
  };
  ScatterSpec spec;
  spec.candidates = {ind.shape()[size_t(axis)]};
  spec.names = [&](const std::vector<Var>& o, const std::vector<Expr>& j) {
    std::vector<Expr> conds = {
        te::eq(ops::detail::wrap_index(ind(at(o, j[0])), data.shape()[size_t(axis)]), Expr(o[size_t(axis)]))};
    for (size_t d = 0; d < size_t(ind.ndim()); ++d)
      if (int(d) != axis && ind.shape()[d] < data.shape()[d]) conds.push_back(Expr(o[d]) < Expr(ind.shape()[d]));
    return ops::detail::all_of(conds);
  };
  spec.value = [&](const std::vector<Var>& o, const std::vector<Expr>& j) { return upd(at(o, j[0])); };
  return one(scatter(c, data, spec));
}

// Trilu: keeps x[..., i, j] where j - i >= k (upper) or j - i <= k (lower), zero elsewhere.
std::vector<ConvertOutput> trilu(const ConvertContext& c) {
  const te::Tensor& x = c.input(0);
  if (x.ndim() < 2) c.fail("input must have rank 2 or more");
  int64_t k = 0;
  if (c.has_input(1)) {
    std::vector<int64_t> kv = c.constant_ints(1, "k");
    if (kv.size() != 1) c.fail("k must hold one value");
    k = kv[0];
  }
  bool upper = c.attr_int("upper", 1) != 0;
  return one(te::compute(
      x.shape(),
      [&](const std::vector<Var>& o) {
        Expr d = o[o.size() - 1] - o[o.size() - 2];
        Expr keep = upper ? d >= Expr(k) : d <= Expr(k);
        return te::select(keep, x(ops::detail::exprs(o)), te::make_const(x.dtype(), 0));
      },
      c.name()));
}

// OneHot: a new axis of `depth` entries, values[1] where it equals the index (negative
// indices count from the end), values[0] elsewhere.
std::vector<ConvertOutput> one_hot(const ConvertContext& c) {
  const te::Tensor &ind = c.input(0), &vals = c.input(2);
  const ops::HostTensor& d = c.constant(1, "depth");
  if (d.num_elements() != 1) c.fail("depth must hold one value");
  int64_t depth = int64_t(d.get(0));
  if (depth < 1) c.fail("depth must be positive");
  if (vals.shape() != ops::Shape{2}) c.fail("values must have shape [2]");
  int axis = ops::normalize_axis(c.attr_int("axis", -1), int(ind.ndim()) + 1, c.name());
  ops::Shape out = ind.shape();
  out.insert(out.begin() + axis, depth);
  return one(te::compute(
      out,
      [&](const std::vector<Var>& o) {
        std::vector<Expr> ii;
        for (int a = 0; a < int(o.size()); ++a)
          if (a != axis) ii.push_back(o[size_t(a)]);
        Expr i = te::cast(te::DataType::i64(), ind(ii));
        i = te::select(i < Expr(0), i + Expr(depth), i);
        return te::select(te::eq(i, te::cast(te::DataType::i64(), o[size_t(axis)])), vals(Expr(1)),
                          vals(Expr(0)));
      },
      c.name()));
}

}  // namespace

void add_shape_converters(std::vector<Converter>& out) {
  out.push_back({"Reshape", reshape, {1}});
  out.push_back({"Flatten", flatten, {}});
  out.push_back({"Transpose", transpose, {}});
  out.push_back({"Squeeze", squeeze, {1}});
  out.push_back({"Unsqueeze", unsqueeze, {1}});
  out.push_back({"Concat", concat, {}});
  out.push_back({"Split", split, {1}});
  out.push_back({"Slice", slice, {1, 2, 3, 4}});
  out.push_back({"Gather", gather, {}});
  out.push_back({"Pad", pad, {1, 2, 3}});
  out.push_back({"Expand",
                 [](const ConvertContext& c) {
                   return one(ops::expand(c.input(0), c.constant_ints(1, "shape"), c.name()));
                 },
                 {1}});
  out.push_back({"Tile",
                 [](const ConvertContext& c) {
                   return one(ops::tile(c.input(0), c.constant_ints(1, "repeats"), c.name()));
                 },
                 {1}});
  out.push_back({"Resize", resize, {1, 2, 3}});
  out.push_back({"Shape", shape, {0}});
  out.push_back({"Constant", constant, {}});
  out.push_back({"ConstantOfShape", constant_of_shape, {0}});
  out.push_back({"Range", range, {0, 1, 2}});
  out.push_back({"Size",
                 [](const ConvertContext& c) -> std::vector<ConvertOutput> {
                   double n = double(c.input_value(0).num_elements());
                   return {ops::HostTensor::from_values({}, te::DataType::i64(), {n})};
                 },
                 {0}});
  out.push_back({"GatherND", gather_nd, {}});
  out.push_back({"ScatterND", scatter_nd, {}});
  out.push_back({"ScatterElements", scatter_elements, {}});
  out.push_back({"DepthToSpace", depth_to_space, {}});
  out.push_back({"SpaceToDepth", space_to_depth, {}});
  out.push_back({"GatherElements", gather_elements, {}});
  out.push_back({"Trilu", trilu, {1}});
  out.push_back({"OneHot", one_hot, {1}});
}

}  // namespace tuner::graph::detail

namespace tuner::graph {

std::vector<int64_t> index_limits(const Graph& g, const Node& n) {
  if (n.inputs.size() < 2 || n.inputs[0] < 0 || n.inputs[1] < 0) return {};
  const ops::Shape& data = g.values[size_t(n.inputs[0])].shape;
  const ops::Shape& ind = g.values[size_t(n.inputs[1])].shape;
  auto attr = [&](const char* name) {
    auto a = n.attrs.find(name);
    return a == n.attrs.end() ? int64_t(0) : a->second.i;
  };
  auto rank = int64_t(data.size());
  if (n.op == "Gather" || n.op == "GatherElements" || n.op == "ScatterElements") {
    int64_t axis = attr("axis");
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return {};
    return {data[size_t(axis)]};
  }
  if (n.op == "GatherND" || n.op == "ScatterND") {
    int64_t b = n.op == "GatherND" ? attr("batch_dims") : 0, k = ind.empty() ? 0 : ind.back();
    if (b < 0 || k < 1 || b + k > rank) return {};
    return std::vector<int64_t>(data.begin() + b, data.begin() + b + k);
  }
  return {};
}

}  // namespace tuner::graph
