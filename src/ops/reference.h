// Naive reference implementations of every operator: straight loops over HostTensors,
// double accumulation for floats, independent of te. They are the ground truth that compute
// definitions (through te_eval) and compiled kernels are checked against.
#pragma once

#include <vector>

#include "ops/host_tensor.h"
#include "ops/shape.h"

namespace tuner::ops::ref {

enum class UnaryOp {
  Relu, Clip, Sigmoid, Tanh, Exp, Log, Sqrt, Erf, Gelu, Silu, Hardswish, Hardsigmoid,
  LeakyRelu, Neg, Abs
};
enum class BinaryOp { Add, Sub, Mul, Div, Pow, Maximum, Minimum, Equal, Less, Greater };

/// Batched matmul with numpy-broadcast batch dimensions (see ops::matmul).
HostTensor matmul(const HostTensor& a, const HostTensor& b, bool transpose_b = false);
/// data [M, K] x weight [N, K]^T (+ bias [N] when defined).
HostTensor dense(const HostTensor& data, const HostTensor& weight, const HostTensor& bias = {});
/// NCHW conv2d with groups (+ bias [K] when defined).
HostTensor conv2d(const HostTensor& data, const HostTensor& weight, const Conv2dAttrs& attrs,
                  const HostTensor& bias = {});
/// Max pooling; padding never wins.
HostTensor max_pool2d(const HostTensor& data, const Pool2dAttrs& attrs);
/// Average pooling with PyTorch's divisor rules.
HostTensor avg_pool2d(const HostTensor& data, const Pool2dAttrs& attrs);
/// Mean over H, W -> [N, C, 1, 1].
HostTensor global_avg_pool(const HostTensor& data);
/// Max over H, W -> [N, C, 1, 1].
HostTensor global_max_pool(const HostTensor& data);

/// Element-wise unary op; p0/p1 are clip's min/max, hardsigmoid's alpha/beta, leaky_relu's alpha.
HostTensor unary(const HostTensor& x, UnaryOp op, double p0 = 0, double p1 = 0);
/// Element-wise binary op with numpy broadcasting (comparisons give bool).
HostTensor binary(const HostTensor& a, const HostTensor& b, BinaryOp op);
/// cond ? a : b with broadcasting.
HostTensor where(const HostTensor& cond, const HostTensor& a, const HostTensor& b);
/// Conversion (float -> int truncates toward zero, wraps to the width; to bool: x != 0).
HostTensor cast(const HostTensor& x, te::DataType dtype);

/// Reduction over axes (empty = all).
HostTensor reduce(const HostTensor& x, ReduceOp op, const std::vector<int64_t>& axes,
                  bool keepdims = false);
/// Softmax along axis.
HostTensor softmax(const HostTensor& x, int64_t axis = -1);
/// Log-softmax along axis.
HostTensor log_softmax(const HostTensor& x, int64_t axis = -1);
/// Layer normalization over the trailing axes (beta may be undefined).
HostTensor layer_norm(const HostTensor& x, const HostTensor& gamma, const HostTensor& beta,
                      const std::vector<int64_t>& axes = {-1}, double epsilon = 1e-5);

/// out dimension d = x dimension perm[d].
HostTensor transpose(const HostTensor& x, const std::vector<int64_t>& perm);
/// Same row-major data, new shape (one -1 inferred).
HostTensor reshape(const HostTensor& x, const std::vector<int64_t>& to);
/// Concatenation along axis.
HostTensor concat(const std::vector<HostTensor>& inputs, int64_t axis);
/// Constant padding, ONNX pads order.
HostTensor pad(const HostTensor& x, const std::vector<int64_t>& pads, double value = 0);
/// ONNX Slice.
HostTensor slice(const HostTensor& x, const std::vector<int64_t>& starts,
                 const std::vector<int64_t>& ends, const std::vector<int64_t>& axes = {},
                 const std::vector<int64_t>& steps = {});
/// ONNX Gather (negative indices wrap, out-of-range clamp).
HostTensor gather(const HostTensor& data, const HostTensor& indices, int64_t axis = 0);

}  // namespace tuner::ops::ref
