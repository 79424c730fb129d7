// Conv, ConvTranspose and pooling. The op library is 2-D (NCHW); 1-D operators (data
// [N, C, L]) run as 2-D over a height of 1, with a leading 1 (or 0 for pads) added to
// every per-axis attribute.
#include <algorithm>
#include <array>

#include "graph/converters_impl.h"
#include "ops/nn.h"
#include "ops/transform.h"
#include "ops/winograd.h"

namespace tuner::graph::detail {

namespace {

// The spatial view of a node: whether its data is 1-D and per-axis attributes as 2-D lists.
class Spatial {
 public:
  Spatial(const ConvertContext& c, const te::Tensor& x) : c_(c) {
    if (x.ndim() != 3 && x.ndim() != 4)
      c.fail("input X has shape " + te::shape_str(x.shape()) +
             "; only 1-D and 2-D spatial operators (rank 3 or 4) are supported");
    one_d_ = x.ndim() == 3;
  }

  bool one_d() const { return one_d_; }
  int rank() const { return one_d_ ? 1 : 2; }

  /// Data or weight lifted to rank 4 (a height of 1 inserted before the last axis).
  te::Tensor lift(const te::Tensor& t, const std::string& suffix) const {
    if (!one_d_) return t;
    if (t.ndim() != 3) c_.fail("weight must have rank 3 for a 1-D operator");
    ops::Shape s = t.shape();
    s.insert(s.end() - 1, 1);
    return ops::reshape(t, s, c_.name(suffix));
  }
  /// The rank-4 result [N, C, 1, L] back to [N, C, L] (the node's final op).
  te::Tensor lower(const te::Tensor& y) const {
    if (!one_d_) return y;
    return ops::reshape(y, {y.shape()[0], y.shape()[1], y.shape()[3]}, c_.name());
  }
  /// Name of the 2-D op: the node's own name unless a reshape follows.
  std::string op_name() const { return one_d_ ? c_.name("2d") : c_.name(); }

  /// A per-axis attribute as two values (height, width); `def` when absent.
  std::vector<int64_t> ints(const std::string& key, int64_t def, int64_t lift_with = 1) const {
    std::vector<int64_t> v = c_.attr_ints(key, std::vector<int64_t>(size_t(rank()), def));
    if (v.size() != size_t(rank()))
      c_.fail(key + " must have " + std::to_string(rank()) + " entries");
    if (one_d_) v.insert(v.begin(), lift_with);
    return v;
  }
  /// The pads attribute as top, left, bottom, right.
  std::array<int64_t, 4> pads() const {
    std::vector<int64_t> p = c_.attr_ints("pads", std::vector<int64_t>(size_t(2 * rank()), 0));
    if (p.size() != size_t(2 * rank()))
      c_.fail("pads must have " + std::to_string(2 * rank()) + " entries");
    if (one_d_) return {0, p[0], 0, p[1]};
    return {p[0], p[1], p[2], p[3]};
  }

 private:
  const ConvertContext& c_;
  bool one_d_ = false;
};

int64_t floor_div2(int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

// Conv/pool padding from the pads attribute or auto_pad, as top, left, bottom, right; `in` is
// the rank-4 data shape.
std::array<int64_t, 4> window_pads(const ConvertContext& c, const Spatial& sp,
                                   const ops::Shape& in, const std::vector<int64_t>& kernel,
                                   const std::vector<int64_t>& strides,
                                   const std::vector<int64_t>& dilations) {
  std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    std::array<int64_t, 4> p = sp.pads();
    for (int64_t v : p)
      if (v < 0) c.fail("negative pads are not supported");
    return p;
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

// The shared part of Conv and ConvTranspose: data and weight as 2-D, strides, dilations.
struct ConvArgs {
  te::Tensor x, w;
  std::vector<int64_t> strides, dil;
};

// x and w default to inputs 0 and 1 (the integer convs pass them centered).
ConvArgs conv_args(const ConvertContext& c, const Spatial& sp, const te::Tensor& x, const te::Tensor& w) {
  ConvArgs a{sp.lift(x, "x2d"), sp.lift(w, "w2d"), sp.ints("strides", 1), sp.ints("dilations", 1)};
  // Rank 5: packed by pack_conv_weights (2-D only).
  if (a.w.ndim() != 4 && !(a.w.ndim() == 5 && !sp.one_d()))
    c.fail("weight W must have the rank of X");
  // kernel_shape, when given, must agree with the weight's spatial dimensions.
  std::vector<int64_t> kernel = sp.ints("kernel_shape", 0);
  if (c.has_attr("kernel_shape") && (kernel[0] != a.w.shape()[2] || kernel[1] != a.w.shape()[3]))
    c.fail("kernel_shape disagrees with the weight's shape " + te::shape_str(a.w.shape()));
  return a;
}

// Conv of data x and weight w (as the node gives them, 1-D or 2-D) with the node's attributes,
// rank 4; `name` names the op.
te::Tensor conv2d_of(const ConvertContext& c, const Spatial& sp, const te::Tensor& data,
                     const te::Tensor& weight, const te::Tensor& bias, const std::string& name) {
  auto [x, w, strides, dil] = conv_args(c, sp, data, weight);
  auto p = window_pads(c, sp, x.shape(), {w.shape()[2], w.shape()[3]}, strides, dil);
  ops::Conv2dAttrs a;
  a.stride_h = strides[0], a.stride_w = strides[1];
  a.dilation_h = dil[0], a.dilation_w = dil[1];
  a.pad_top = p[0], a.pad_left = p[1], a.pad_bottom = p[2], a.pad_right = p[3];
  a.groups = c.attr_int("group", 1);
  // byte_dot_convs' form: data and weight in words of 4 channels' bytes.
  a.byte_dot = c.has_attr("tuner_pad_word");
  a.pad_word = c.attr_int("tuner_pad_word", 0);
  a.row_words = c.attr_int("tuner_row_words", 0);
  return ops::conv2d(x, w, a, bias, name);
}

std::vector<ConvertOutput> conv(const ConvertContext& c) {
  Spatial sp(c, c.input(0));
  te::Tensor bias = c.has_input(2) ? c.input(2) : te::Tensor();
  return one(sp.lower(conv2d_of(c, sp, c.input(0), c.input(1), bias, sp.op_name())));
}

// An integer conv's data: centred in int32, or the bytes themselves for byte_dot_depthwise_convs'
// row words (their zero point is in the bias).
te::Tensor data_of_integer_conv(const ConvertContext& c) {
  return c.has_attr("tuner_row_words") ? c.input(0) : centered_int32(c, 0, 2, -1, "x");
}

// ConvInteger: (x - x_zero_point) * (w - w_zero_point) in int32; x's zero point per tensor,
// w's per tensor or per output channel. Input 4, not ONNX's: byte_dot_convs' int32 bias.
std::vector<ConvertOutput> conv_integer(const ConvertContext& c) {
  Spatial sp(c, c.input(0));
  te::Tensor x = data_of_integer_conv(c), w = centered_int32(c, 1, 3, 0, "w");
  te::Tensor bias = c.has_input(4) ? c.input(4) : te::Tensor();
  return one(sp.lower(conv2d_of(c, sp, x, w, bias, sp.op_name())));
}

// QLinearConv: ConvInteger's sum plus the int32 bias, requantized with x_scale * w_scale /
// y_scale (w_scale per tensor or per output channel).
std::vector<ConvertOutput> qlinear_conv(const ConvertContext& c) {
  Spatial sp(c, c.input(0));
  te::Tensor x = data_of_integer_conv(c), w = centered_int32(c, 3, 5, 0, "w");
  te::Tensor bias;
  if (c.has_input(8)) {
    bias = c.input(8);
    if (bias.dtype() != te::DataType::i32()) c.fail("B must be int32");
  }
  te::Tensor acc = conv2d_of(c, sp, x, w, bias, c.name("acc"));
  te::Tensor y = requantize(
      c, acc,
      [&](const std::vector<te::Var>& o) {
        // Input 9, not ONNX's: fold_requantize_scales' multipliers.
        if (c.has_input(9)) return scale_at(c, 9, acc, 1, o[1], "requantize scale");
        return scale_at(c, 1, x, -1, te::Expr(0), "x_scale") * scale_at(c, 4, acc, 1, o[1], "w_scale") /
               scale_at(c, 6, x, -1, te::Expr(0), "y_scale");
      },
      7, sp.op_name());
  return one(sp.lower(y));
}

// ConvTranspose pads: from output_shape or auto_pad SAME_* (the total split like ONNX's
// reference: SAME_UPPER puts the smaller half first, otherwise the larger), else the pads
// attribute.
std::array<int64_t, 4> conv_transpose_pads(const ConvertContext& c, const Spatial& sp,
                                           const ops::Shape& in, const ops::Shape& kernel,
                                           const std::vector<int64_t>& strides,
                                           const std::vector<int64_t>& dil,
                                           const std::vector<int64_t>& out_pad) {
  std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (!same && auto_pad != "NOTSET" && auto_pad != "VALID")
    c.fail("unknown auto_pad '" + auto_pad + "'");
  if (!c.has_attr("output_shape") && !same) {
    if (auto_pad == "VALID") return {0, 0, 0, 0};
    std::array<int64_t, 4> p = sp.pads();
    for (int64_t v : p)
      if (v < 0) c.fail("negative pads are not supported");
    return p;
  }
  std::vector<int64_t> out = {in[2] * strides[0], in[3] * strides[1]};
  if (c.has_attr("output_shape")) {
    std::vector<int64_t> s = c.attr_ints("output_shape", {});
    if (s.size() == size_t(sp.rank()) + 2) s.erase(s.begin(), s.begin() + 2);  // N, C given
    if (s.size() != size_t(sp.rank()))
      c.fail("output_shape must have " + std::to_string(sp.rank()) + " entries");
    if (sp.one_d()) s.insert(s.begin(), 1);
    out = s;
  }
  std::array<int64_t, 4> pads{};
  for (size_t d = 0; d < 2; ++d) {
    int64_t total = strides[d] * (in[2 + d] - 1) + out_pad[d] + (kernel[d] - 1) * dil[d] + 1 -
                    out[d];
    int64_t half = floor_div2(total);
    pads[d] = auto_pad == "SAME_UPPER" ? half : total - half;
    pads[d + 2] = total - pads[d];
  }
  return pads;
}

std::vector<ConvertOutput> conv_transpose(const ConvertContext& c) {
  Spatial sp(c, c.input(0));
  auto [x, w, strides, dil] = conv_args(c, sp, c.input(0), c.input(1));
  std::vector<int64_t> out_pad = sp.ints("output_padding", 0, 0);
  for (size_t d = 0; d < 2; ++d)  // ONNX: less than the stride or the dilation
    if (out_pad[d] >= std::max(strides[d], dil[d]))
      c.fail("output_padding " + std::to_string(out_pad[d]) + " must be less than the stride (" +
             std::to_string(strides[d]) + ") or the dilation (" + std::to_string(dil[d]) + ")");
  ops::Shape kernel = {w.shape()[2], w.shape()[3]};
  auto p = conv_transpose_pads(c, sp, x.shape(), kernel, strides, dil, out_pad);
  ops::ConvTranspose2dAttrs a;
  a.stride_h = strides[0], a.stride_w = strides[1];
  a.dilation_h = dil[0], a.dilation_w = dil[1];
  a.pad_top = p[0], a.pad_left = p[1], a.pad_bottom = p[2], a.pad_right = p[3];
  a.output_padding_h = out_pad[0], a.output_padding_w = out_pad[1];
  a.groups = c.attr_int("group", 1);
  te::Tensor bias = c.has_input(2) ? c.input(2) : te::Tensor();
  return one(sp.lower(ops::conv2d_transpose(x, w, a, bias, sp.op_name())));
}

ops::Pool2dAttrs pool_attrs(const ConvertContext& c, const Spatial& sp, const te::Tensor& x) {
  c.attr("kernel_shape");  // required
  std::vector<int64_t> kernel = sp.ints("kernel_shape", 1);
  std::vector<int64_t> strides = sp.ints("strides", 1), dil = sp.ints("dilations", 1);
  if (c.attr_int("storage_order", 0) != 0) c.fail("column-major storage_order is not supported");
  auto p = window_pads(c, sp, x.shape(), kernel, strides, dil);
  ops::Pool2dAttrs a;
  a.kernel_h = kernel[0], a.kernel_w = kernel[1];
  a.stride_h = strides[0], a.stride_w = strides[1];
  a.dilation_h = dil[0], a.dilation_w = dil[1];
  a.pad_top = p[0], a.pad_left = p[1], a.pad_bottom = p[2], a.pad_right = p[3];
  a.ceil_mode = c.attr_int("ceil_mode", 0) != 0;
  a.count_include_pad = c.attr_int("count_include_pad", 0) != 0;
  return a;
}

std::vector<ConvertOutput> max_pool(const ConvertContext& c) {
  if (c.node().outputs.size() > 1) c.fail("the Indices output is not supported");
  Spatial sp(c, c.input(0));
  te::Tensor x = sp.lift(c.input(0), "x2d");
  return one(sp.lower(ops::max_pool2d(x, pool_attrs(c, sp, x), sp.op_name())));
}

std::vector<ConvertOutput> avg_pool(const ConvertContext& c) {
  Spatial sp(c, c.input(0));
  te::Tensor x = sp.lift(c.input(0), "x2d");
  return one(sp.lower(ops::avg_pool2d(x, pool_attrs(c, sp, x), sp.op_name())));
}

template <class F>
Converter global_pool(const char* op, F f, HalfInputs half) {
  return {op,
          [f](const ConvertContext& c) {
            Spatial sp(c, c.input(0));
            return one(sp.lower(f(sp.lift(c.input(0), "x2d"), sp.op_name())));
          },
          {},
          half};
}

// The Winograd conv winograd_convs made of a Conv (internal: no ONNX model names it).
ops::WinogradGeometry winograd_geometry(const ConvertContext& c) {
  std::vector<int64_t> p = c.attr("pads").ints;
  if (p.size() != 4) c.fail("pads must have 4 entries");
  return ops::WinogradGeometry::make(c.attr("data_shape").ints, {p[0], p[1], p[2], p[3]});
}

std::vector<ConvertOutput> winograd_conv(const ConvertContext& c) {
  te::Tensor bias = c.has_input(2) ? c.input(2) : te::Tensor();
  return one(ops::winograd_conv(c.input(0), c.input(1), winograd_geometry(c), bias, c.name()));
}

}  // namespace

void add_conv_converters(std::vector<Converter>& out) {
  out.push_back({"tuner.WinogradConv", winograd_conv, {}, HalfInputs::kInFloat32});
  out.push_back({"Conv", conv, {}, HalfInputs::kInFloat32});
  out.push_back({"ConvTranspose", conv_transpose, {}, HalfInputs::kInFloat32});
  out.push_back({"ConvInteger", conv_integer, {}});
  out.push_back({"QLinearConv", qlinear_conv, {}});
  out.push_back({"MaxPool", max_pool, {}});
  out.push_back({"AveragePool", avg_pool, {}, HalfInputs::kInFloat32});
  out.push_back(global_pool(
      "GlobalAveragePool",
      [](const te::Tensor& x, const std::string& n) { return ops::global_avg_pool(x, n); },
      HalfInputs::kInFloat32));
  out.push_back(global_pool(
      "GlobalMaxPool",
      [](const te::Tensor& x, const std::string& n) { return ops::global_max_pool(x, n); },
      HalfInputs::kAsIs));
}

}  // namespace tuner::graph::detail
