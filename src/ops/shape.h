// Operator attributes and shape inference shared by the te definitions and the references:
// every check of a user-supplied shape or attribute lives here, once, and fails with a
// UserError naming the op and the shapes. Independent of te expressions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tuner::ops {

/// a / b rounded up, for a >= 0 and b > 0, without the overflow of (a + b - 1) / b.
inline int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }

using Shape = std::vector<int64_t>;

/// conv2d attributes (NCHW data, KCRS weight). Pads are top, left, bottom, right.
struct Conv2dAttrs {
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t groups = 1;
  // int32 data and weight holding 4 input channels' bytes each (data uint8, weight int8;
  // ops::byte_words, the weight plain or packed): a product is te's dot_u8s8x4 of the two words, and
  // the padding is `pad_word` (the data's zero point in every byte).
  bool byte_dot = false;
  int64_t pad_word = 0;
  // With byte_dot, a depthwise conv's rows as byte dots: data uint8,
  // weight [C, 1, KH, 1] words of a row's `row_words` taps (its window's width, up to 3),
  // pad_word the padding's byte.
  int64_t row_words = 0;
  bool has_padding() const { return pad_top || pad_left || pad_bottom || pad_right; }
};

/// conv2d_transpose attributes (NCHW data, weight [C, K/groups, KH, KW]). Pads (top, left,
/// bottom, right) crop the full output; negative pads extend it (ONNX output_shape can ask
/// for that). output_padding adds rows/columns at the bottom/right.
struct ConvTranspose2dAttrs {
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t output_padding_h = 0, output_padding_w = 0;
  int64_t groups = 1;
};

/// 2-D pooling attributes (NCHW). Pads are top, left, bottom, right.
struct Pool2dAttrs {
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  /// Window element spacing (max pooling only).
  int64_t dilation_h = 1, dilation_w = 1;
  /// Output size rounds up; a last window starting in the bottom/right padding is dropped.
  bool ceil_mode = false;
  /// avg pool: divide by the window clipped to the padded input (true) or to the input.
  bool count_include_pad = false;
};

/// ONNX Resize: how an output coordinate maps to the input and how it is sampled.
struct ResizeAttrs {
  enum class Mode { Nearest, Linear, Cubic };
  /// Output x -> input coordinate (scale = output / input along the axis, or as given).
  enum class Coord {
    HalfPixel,         // (x + 0.5) / scale - 0.5
    PytorchHalfPixel,  // like HalfPixel, but 0 when the output has one element
    AlignCorners,      // x * (in - 1) / (out - 1)
    Asymmetric,        // x / scale
    TfHalfPixelForNN,  // (x + 0.5) / scale
    TfCropAndResize,   // x * (end - start) * (in - 1) / (out - 1) + start * (in - 1), roi
    HalfPixelSymmetric,  // HalfPixel shifted so a rounded output length stays centred (opset 19)
  };
  /// Rounding of the input coordinate in Nearest mode.
  enum class Round { PreferFloor, PreferCeil, Floor, Ceil };
  Mode mode = Mode::Nearest;
  Coord coord = Coord::HalfPixel;
  Round nearest = Round::PreferFloor;
  /// Per axis scale (output / input when sizes were given); the same length as the shape.
  std::vector<double> scales;
  /// TfCropAndResize only: starts then ends, normalized to [0, 1], one per axis each.
  std::vector<double> roi;
  /// TfCropAndResize only: the value of output points mapping outside the input.
  double extrapolation_value = 0.0;
  /// Cubic only: the kernel's a (-0.75 as in PyTorch, -0.5 as in TensorFlow), and whether
  /// taps outside the input get weight 0 (the others renormalized) instead of the edge value.
  double cubic_a = -0.75;
  bool exclude_outside = false;
  /// Linear and cubic only: when downsampling an axis, the kernel stretched by 1 / scale, so
  /// every input element within its reach contributes (ONNX Resize 18's antialias).
  bool antialias = false;
};

/// The combiner of a reduce op (Mean = Sum divided by the reduced element count).
enum class ReduceOp { Sum, Mean, Max, Min, Prod };

/// Numpy broadcasting of several shapes; `op` names the operator in the error.
Shape broadcast_shapes(const std::vector<Shape>& shapes, const std::string& op);
/// Axis in [-ndim, ndim) -> [0, ndim).
int normalize_axis(int64_t axis, int ndim, const std::string& op);
/// Normalized, sorted, duplicate-free axes; an empty list means all axes.
std::vector<int> normalize_axes(const std::vector<int64_t>& axes, int ndim, const std::string& op);

/// [batch..., M, K] x [batch..., K, N] (or [batch..., N, K] when transpose_b) with numpy
/// broadcasting of the batch dimensions.
Shape matmul_shape(const Shape& a, const Shape& b, bool transpose_b, const std::string& op);
/// A conv weight [K, C, KH, KW] packed by output-channel blocks of b: [K/b, C, KH, KW, b], so a
/// vector over b output channels is one contiguous load (the CPU layout; groups = 1).
Shape packed_weight_shape(const Shape& kcrs, int64_t block);
/// The logical [K, C, KH, KW] shape of a packed weight [K/b, C, KH, KW, b].
Shape unpacked_weight_shape(const Shape& packed);
/// Output [N, K, OH, OW] of conv2d over data [N, C, H, W] with weight [K, C/groups, KH, KW]
/// (or packed, see packed_weight_shape).
Shape conv2d_shape(const Shape& data, const Shape& weight, const Conv2dAttrs& a,
                   const std::string& op);
/// Output [N, K, OH, OW] of conv2d_transpose over data [N, C, H, W] with weight
/// [C, K/groups, KH, KW].
Shape conv2d_transpose_shape(const Shape& data, const Shape& weight,
                             const ConvTranspose2dAttrs& a, const std::string& op);
/// Output [N, C, OH, OW] of 2-D pooling.
Shape pool2d_shape(const Shape& data, const Pool2dAttrs& a, const std::string& op);
/// Shape after reducing `axes` (normalized).
Shape reduce_shape(const Shape& s, const std::vector<int>& axes, bool keepdims);
/// Checks that `axes` are the last dimensions of a rank-ndim tensor; returns them normalized.
std::vector<int> trailing_axes(const std::vector<int64_t>& axes, int ndim, const std::string& op);

/// Checks a permutation of [0, ndim); returns the transposed shape.
Shape transpose_shape(const Shape& s, const std::vector<int64_t>& perm, const std::string& op);
/// Resolves one -1 in `to` and checks the element count.
Shape reshape_shape(const Shape& s, const std::vector<int64_t>& to, const std::string& op);
/// Shape of concatenating `shapes` along `axis` (normalized).
Shape concat_shape(const std::vector<Shape>& shapes, int axis, const std::string& op);
/// pads = [begin_0, ..., begin_{n-1}, end_0, ..., end_{n-1}] (ONNX order, non-negative).
Shape pad_shape(const Shape& s, const std::vector<int64_t>& pads, const std::string& op);

/// Each dimension of s times its repeat count (all >= 1).
Shape tile_shape(const Shape& s, const std::vector<int64_t>& repeats, const std::string& op);
/// Checks resizing data of shape `in` to `out` with `a` (ranks, positive sizes, scales, roi).
void check_resize(const Shape& in, const Shape& out, const ResizeAttrs& a, const std::string& op);

/// One dimension of a resolved slice: element i of the output reads input start + i*step.
struct SliceDim {
  int64_t start = 0, step = 1, extent = 0;
};
/// Resolves ONNX/numpy slice arguments (negative indices wrap, out-of-range clamps; axes
/// empty = 0..len-1; steps empty = all 1, one step = used for every sliced axis). An empty
/// slice is a UserError unless `allow_empty` (then its extent is 0).
std::vector<SliceDim> resolve_slice(const Shape& s, const std::vector<int64_t>& starts,
                                    const std::vector<int64_t>& ends,
                                    const std::vector<int64_t>& axes,
                                    const std::vector<int64_t>& steps, const std::string& op,
                                    bool allow_empty = false);
/// data.shape[:axis] + indices.shape + data.shape[axis+1:].
Shape gather_shape(const Shape& data, const Shape& indices, int axis);

}  // namespace tuner::ops
