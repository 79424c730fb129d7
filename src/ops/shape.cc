#include "ops/shape.h"

#include <algorithm>
#include <set>

#include "support/error.h"

namespace tuner::ops {

namespace {

std::string list_string(const std::vector<int64_t>& v) {
  std::string r;
  for (size_t i = 0; i < v.size(); ++i) r += (i ? "," : "") + std::to_string(v[i]);
  return "[" + r + "]";
}

// Sums and products of sizes (dims, pads, dilations): absurd attributes are refused, not
// wrapped around into negative sizes.
int64_t add(int64_t a, int64_t b, const std::string& op) {
  int64_t r;
  USER_CHECK(!__builtin_add_overflow(a, b, &r))
      << op << ": sizes overflow 64 bits (" << a << " + " << b << ")";
  return r;
}
int64_t sub(int64_t a, int64_t b, const std::string& op) {
  int64_t r;
  USER_CHECK(!__builtin_sub_overflow(a, b, &r))
      << op << ": sizes overflow 64 bits (" << a << " - " << b << ")";
  return r;
}
int64_t mul(int64_t a, int64_t b, const std::string& op) {
  int64_t r;
  USER_CHECK(!__builtin_mul_overflow(a, b, &r))
      << op << ": sizes overflow 64 bits (" << a << " * " << b << ")";
  return r;
}

}  // namespace

Shape broadcast_shapes(const std::vector<Shape>& shapes, const std::string& op) {
  size_t rank = 0;
  for (auto& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (auto& s : shapes) {
    size_t off = rank - s.size();
    for (size_t d = 0; d < s.size(); ++d) {
      int64_t& o = out[off + d];
      if (s[d] == o || s[d] == 1) continue;
      if (o == 1) {
        o = s[d];
        continue;
      }
      std::string all;
      for (auto& x : shapes) all += (all.empty() ? "" : " and ") + te::shape_str(x);
      USER_ERROR() << op << ": shapes " << all << " are not broadcastable";
    }
  }
  return out;
}

int normalize_axis(int64_t axis, int ndim, const std::string& op) {
  USER_CHECK(axis >= -ndim && axis < ndim)
      << op << ": axis " << axis << " is out of range for a tensor of rank " << ndim;
  return int(axis < 0 ? axis + ndim : axis);
}

std::vector<int> normalize_axes(const std::vector<int64_t>& axes, int ndim,
                                const std::string& op) {
  std::vector<int> out;
  if (axes.empty()) {
    for (int d = 0; d < ndim; ++d) out.push_back(d);
    return out;
  }
  for (auto a : axes) out.push_back(normalize_axis(a, ndim, op));
  std::sort(out.begin(), out.end());
  USER_CHECK(std::adjacent_find(out.begin(), out.end()) == out.end())
      << op << ": axis listed twice in " << list_string(axes);
  return out;
}

Shape matmul_shape(const Shape& a, const Shape& b, bool transpose_b, const std::string& op) {
  USER_CHECK(a.size() >= 2 && b.size() >= 2) << op << ": operands must have rank >= 2, got "
                                             << te::shape_str(a) << " and " << te::shape_str(b);
  int64_t m = a[a.size() - 2], k = a.back();
  int64_t kb = transpose_b ? b.back() : b[b.size() - 2];
  int64_t n = transpose_b ? b[b.size() - 2] : b.back();
  USER_CHECK(k == kb) << op << ": reduction sizes differ: A is " << te::shape_str(a) << " (K=" << k
                      << "), B is " << te::shape_str(b) << " (K=" << kb << ")"
                      << (transpose_b ? " with B transposed" : "");
  Shape out = broadcast_shapes({Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2)},
                               op + " batch dimensions");
  out.push_back(m);
  out.push_back(n);
  return out;
}

Shape unpacked_weight_shape(const Shape& packed) {
  INTERNAL_CHECK(packed.size() == 5) << "not a packed conv weight: " << te::shape_str(packed);
  return {packed[0] * packed[4], packed[1], packed[2], packed[3]};
}

Shape packed_weight_shape(const Shape& kcrs, int64_t block) {
  INTERNAL_CHECK(kcrs.size() == 4 && block > 0 && kcrs[0] % block == 0)
      << "cannot pack weight " << te::shape_str(kcrs) << " by " << block;
  return {kcrs[0] / block, kcrs[1], kcrs[2], kcrs[3], block};
}

Shape conv2d_shape(const Shape& data, const Shape& weight, const Conv2dAttrs& a,
                   const std::string& op) {
  USER_CHECK(data.size() == 4 && (weight.size() == 4 || weight.size() == 5))
      << op << ": data must be NCHW and weight KCRS (rank 4) or packed [K/b, C, R, S, b], got "
      << te::shape_str(data) << " and " << te::shape_str(weight);
  if (weight.size() == 5) {  // packed: the same checks on the logical KCRS shape
    // A block must lie in one group: its lanes then read the same input channel.
    USER_CHECK(a.groups >= 1 && weight[0] * weight[4] % a.groups == 0 &&
               weight[0] * weight[4] / a.groups % weight[4] == 0)
        << op << ": a packed weight's block (" << weight[4] << ") must divide the output channels per group";
    return conv2d_shape(data, unpacked_weight_shape(weight), a, op);
  }
  USER_CHECK(a.groups >= 1) << op << ": groups must be >= 1, got " << a.groups;
  USER_CHECK(a.stride_h >= 1 && a.stride_w >= 1 && a.dilation_h >= 1 && a.dilation_w >= 1)
      << op << ": strides and dilations must be >= 1";
  USER_CHECK(a.pad_top >= 0 && a.pad_left >= 0 && a.pad_bottom >= 0 && a.pad_right >= 0)
      << op << ": pads must be >= 0";
  int64_t c = data[1], k = weight[0];
  USER_CHECK(c % a.groups == 0 && k % a.groups == 0)
      << op << ": input channels (" << c << ") and output channels (" << k
      << ") must be divisible by groups (" << a.groups << "); data " << te::shape_str(data)
      << ", weight " << te::shape_str(weight);
  USER_CHECK(weight[1] == c / a.groups)
      << op << ": weight " << te::shape_str(weight) << " must have " << c / a.groups
      << " input channels per group for data " << te::shape_str(data) << " and groups " << a.groups;
  int64_t eh = add(mul(a.dilation_h, weight[2] - 1, op), 1, op);
  int64_t ew = add(mul(a.dilation_w, weight[3] - 1, op), 1, op);
  int64_t ph = add(add(data[2], a.pad_top, op), a.pad_bottom, op);
  int64_t pw = add(add(data[3], a.pad_left, op), a.pad_right, op);
  USER_CHECK(ph >= eh && pw >= ew)
      << op << ": the dilated kernel (" << eh << "x" << ew << ") is larger than the padded input ("
      << ph << "x" << pw << "); data " << te::shape_str(data) << ", weight "
      << te::shape_str(weight);
  return {data[0], k, (ph - eh) / a.stride_h + 1, (pw - ew) / a.stride_w + 1};
}

Shape conv2d_transpose_shape(const Shape& data, const Shape& weight,
                             const ConvTranspose2dAttrs& a, const std::string& op) {
  USER_CHECK(data.size() == 4 && weight.size() == 4)
      << op << ": data must be NCHW and weight [C, K/groups, KH, KW] (rank 4), got "
      << te::shape_str(data) << " and " << te::shape_str(weight);
  USER_CHECK(a.groups >= 1) << op << ": groups must be >= 1, got " << a.groups;
  USER_CHECK(a.stride_h >= 1 && a.stride_w >= 1 && a.dilation_h >= 1 && a.dilation_w >= 1)
      << op << ": strides and dilations must be >= 1";
  USER_CHECK(a.output_padding_h >= 0 && a.output_padding_w >= 0)
      << op << ": output padding must be >= 0";
  USER_CHECK(weight[0] == data[1] && data[1] % a.groups == 0)
      << op << ": weight " << te::shape_str(weight) << " must have the " << data[1]
      << " input channels of data " << te::shape_str(data) << " first, divisible by groups ("
      << a.groups << ")";
  auto size = [&](int64_t in, int64_t k, int64_t s, int64_t d, int64_t p0, int64_t p1,
                  int64_t extra) {
    int64_t full = add(add(add(mul(in - 1, s, op), mul(d, k - 1, op), op), 1, op), extra, op);
    return sub(sub(full, p0, op), p1, op);  // negative pads widen the output
  };
  int64_t oh = size(data[2], weight[2], a.stride_h, a.dilation_h, a.pad_top, a.pad_bottom,
                    a.output_padding_h);
  int64_t ow = size(data[3], weight[3], a.stride_w, a.dilation_w, a.pad_left, a.pad_right,
                    a.output_padding_w);
  USER_CHECK(oh >= 1 && ow >= 1) << op << ": pads leave an empty output (" << oh << "x" << ow
                                 << "); data " << te::shape_str(data) << ", weight "
                                 << te::shape_str(weight);
  return {data[0], weight[1] * a.groups, oh, ow};
}

Shape pool2d_shape(const Shape& data, const Pool2dAttrs& a, const std::string& op) {
  USER_CHECK(data.size() == 4) << op << ": data must be NCHW (rank 4), got " << te::shape_str(data);
  USER_CHECK(a.kernel_h >= 1 && a.kernel_w >= 1 && a.stride_h >= 1 && a.stride_w >= 1 &&
             a.dilation_h >= 1 && a.dilation_w >= 1)
      << op << ": kernel, strides and dilations must be >= 1";
  USER_CHECK(a.pad_top >= 0 && a.pad_left >= 0 && a.pad_bottom >= 0 && a.pad_right >= 0)
      << op << ": pads must be >= 0";
  // The window's extent; a window entirely in the padding would have no input element.
  int64_t kh = add(mul(a.dilation_h, a.kernel_h - 1, op), 1, op);
  int64_t kw = add(mul(a.dilation_w, a.kernel_w - 1, op), 1, op);
  USER_CHECK(a.pad_top < kh && a.pad_bottom < kh && a.pad_left < kw && a.pad_right < kw)
      << op << ": pads must be smaller than the (dilated) kernel (" << kh << "x" << kw << ")";
  auto out_size = [&](int64_t in, int64_t k, int64_t s, int64_t p0, int64_t p1) {
    int64_t span = add(add(in, p0, op), p1, op) - k;
    USER_CHECK(span >= 0) << op << ": kernel " << a.kernel_h << "x" << a.kernel_w
                          << " is larger than the padded input of " << te::shape_str(data);
    int64_t o = (a.ceil_mode ? ceil_div(span, s) : span / s) + 1;
    // The last window must start inside the input or the leading padding.
    if (a.ceil_mode && (o - 1) * s >= in + p0) --o;
    return o;
  };
  return {data[0], data[1], out_size(data[2], kh, a.stride_h, a.pad_top, a.pad_bottom),
          out_size(data[3], kw, a.stride_w, a.pad_left, a.pad_right)};
}

Shape reduce_shape(const Shape& s, const std::vector<int>& axes, bool keepdims) {
  Shape out;
  for (int d = 0; d < int(s.size()); ++d) {
    bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
    if (!reduced) out.push_back(s[d]);
    else if (keepdims) out.push_back(1);
  }
  return out;
}

std::vector<int> trailing_axes(const std::vector<int64_t>& axes, int ndim, const std::string& op) {
  std::vector<int> out = normalize_axes(axes, ndim, op);
  bool trailing = !axes.empty() && !out.empty() && out.back() == ndim - 1 &&
                  out.back() - out.front() + 1 == int(out.size());
  USER_CHECK(trailing)
      << op << ": axes " << list_string(axes) << " must be the last dimensions of a rank-"
      << ndim << " tensor";
  return out;
}

Shape transpose_shape(const Shape& s, const std::vector<int64_t>& perm, const std::string& op) {
  USER_CHECK(perm.size() == s.size()) << op << ": permutation " << list_string(perm)
                                      << " does not match shape " << te::shape_str(s);
  std::set<int64_t> seen(perm.begin(), perm.end());
  USER_CHECK(seen.size() == perm.size() &&
             (perm.empty() || (*seen.begin() == 0 && *seen.rbegin() == int64_t(s.size()) - 1)))
      << op << ": " << list_string(perm) << " is not a permutation of the " << s.size()
      << " axes of " << te::shape_str(s);
  Shape out;
  for (auto p : perm) out.push_back(s[p]);
  return out;
}

Shape reshape_shape(const Shape& s, const std::vector<int64_t>& to, const std::string& op) {
  int64_t n = 1, known = 1;
  for (auto d : s) n *= d;
  int infer = -1;
  for (size_t i = 0; i < to.size(); ++i) {
    if (to[i] == -1) {
      USER_CHECK(infer < 0) << op << ": more than one -1 in " << list_string(to);
      infer = int(i);
    } else {
      USER_CHECK(to[i] > 0) << op << ": bad target dimension " << to[i] << " in "
                            << list_string(to);
      known *= to[i];
    }
  }
  Shape out = to;
  if (infer >= 0) {
    USER_CHECK(n % known == 0) << op << ": cannot reshape " << te::shape_str(s) << " to "
                               << list_string(to);
    out[infer] = n / known;
  }
  int64_t m = 1;
  for (auto d : out) m *= d;
  USER_CHECK(m == n) << op << ": cannot reshape " << te::shape_str(s) << " (" << n
                     << " elements) to " << te::shape_str(out) << " (" << m << " elements)";
  return out;
}

Shape concat_shape(const std::vector<Shape>& shapes, int axis, const std::string& op) {
  USER_CHECK(!shapes.empty()) << op << ": nothing to concatenate";
  Shape out = shapes[0];
  for (size_t i = 1; i < shapes.size(); ++i) {
    const Shape& s = shapes[i];
    bool ok = s.size() == out.size();
    for (size_t d = 0; ok && d < s.size(); ++d) ok = int(d) == axis || s[d] == out[d];
    USER_CHECK(ok) << op << ": cannot concatenate " << te::shape_str(shapes[0]) << " and "
                   << te::shape_str(s) << " along axis " << axis;
    out[axis] += s[axis];
  }
  return out;
}

Shape pad_shape(const Shape& s, const std::vector<int64_t>& pads, const std::string& op) {
  USER_CHECK(pads.size() == 2 * s.size())
      << op << ": " << pads.size() << " pads for a rank-" << s.size()
      << " tensor (expected begins then ends, " << 2 * s.size() << " values)";
  Shape out = s;
  for (size_t d = 0; d < s.size(); ++d) {
    USER_CHECK(pads[d] >= 0 && pads[d + s.size()] >= 0)
        << op << ": negative pads " << list_string(pads) << " are not supported";
    out[d] = add(out[d], add(pads[d], pads[d + s.size()], op), op);
  }
  return out;
}

Shape tile_shape(const Shape& s, const std::vector<int64_t>& repeats, const std::string& op) {
  USER_CHECK(repeats.size() == s.size())
      << op << ": " << repeats.size() << " repeats " << list_string(repeats)
      << " for a tensor of shape " << te::shape_str(s);
  Shape out = s;
  for (size_t d = 0; d < s.size(); ++d) {
    USER_CHECK(repeats[d] >= 1) << op << ": repeats " << list_string(repeats)
                                << " must be >= 1 (empty tensors are not supported)";
    out[d] *= repeats[d];
  }
  return out;
}

void check_resize(const Shape& in, const Shape& out, const ResizeAttrs& a, const std::string& op) {
  USER_CHECK(out.size() == in.size() && a.scales.size() == in.size())
      << op << ": output " << te::shape_str(out) << " and " << a.scales.size()
      << " scales must match the rank of input " << te::shape_str(in);
  for (size_t d = 0; d < in.size(); ++d) {
    USER_CHECK(out[d] >= 1) << op << ": output shape " << te::shape_str(out)
                            << " has an empty dimension (empty tensors are not supported)";
    USER_CHECK(a.scales[d] > 0) << op << ": scale " << a.scales[d] << " of axis " << d
                                << " must be positive";
  }
  if (a.coord == ResizeAttrs::Coord::TfCropAndResize) {
    USER_CHECK(a.roi.size() == 2 * in.size())
        << op << ": tf_crop_and_resize needs a roi of " << 2 * in.size() << " values, got "
        << a.roi.size();
  }
}

std::vector<SliceDim> resolve_slice(const Shape& s, const std::vector<int64_t>& starts,
                                    const std::vector<int64_t>& ends,
                                    const std::vector<int64_t>& axes,
                                    const std::vector<int64_t>& steps, const std::string& op,
                                    bool allow_empty) {
  int ndim = int(s.size());
  USER_CHECK(starts.size() == ends.size() && starts.size() <= s.size())
      << op << ": starts " << list_string(starts) << " and ends " << list_string(ends)
      << " must have one value per sliced axis of " << te::shape_str(s);
  std::vector<int64_t> ax = axes;
  if (ax.empty())
    for (size_t i = 0; i < starts.size(); ++i) ax.push_back(int64_t(i));
  USER_CHECK(ax.size() == starts.size()) << op << ": axes " << list_string(axes)
                                         << " do not match starts " << list_string(starts);
  USER_CHECK(steps.size() <= 1 || steps.size() == starts.size())
      << op << ": steps " << list_string(steps) << " do not match starts " << list_string(starts);
  std::vector<SliceDim> out;
  for (auto d : s) out.push_back({0, 1, d});
  std::vector<bool> seen(ndim, false);
  for (size_t i = 0; i < ax.size(); ++i) {
    int d = normalize_axis(ax[i], ndim, op);
    USER_CHECK(!seen[d]) << op << ": axis " << d << " is sliced twice";
    seen[d] = true;
    int64_t dim = s[d], step = steps.empty() ? 1 : steps[steps.size() == 1 ? 0 : i];
    USER_CHECK(step != 0 && step != INT64_MIN) << op << ": step must not be 0 (nor -2^63)";
    int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t end = ends[i] < 0 ? ends[i] + dim : ends[i];
    int64_t extent;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      extent = end > start ? ceil_div(end - start, step) : 0;
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      extent = start > end ? ceil_div(start - end, -step) : 0;
    }
    USER_CHECK(extent > 0 || allow_empty) << op << ": slice of axis " << d << " (size " << dim << ") from "
                           << starts[i] << " to " << ends[i] << " step " << step
                           << " is empty (empty tensors are not supported)";
    out[d] = {start, step, extent};
  }
  return out;
}

Shape gather_shape(const Shape& data, const Shape& indices, int axis) {
  Shape out(data.begin(), data.begin() + axis);
  out.insert(out.end(), indices.begin(), indices.end());
  out.insert(out.end(), data.begin() + axis + 1, data.end());
  return out;
}

}  // namespace tuner::ops
