// Internal to the converter registry: each category file adds its operators, and the helpers
// they share.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "graph/converters.h"

namespace tuner::graph::detail {

/// Conv, ConvTranspose, pooling (1-D and 2-D).
void add_conv_converters(std::vector<Converter>& out);
/// Gemm, MatMul, BatchNormalization, softmax, normalizations, reductions.
void add_nn_converters(std::vector<Converter>& out);
/// Unary and binary element-wise operators, Clip, Where, Cast, comparisons.
void add_elementwise_converters(std::vector<Converter>& out);
/// Shape and data movement: Reshape, Transpose, Concat, Split, Slice, Gather, Expand, Tile,
/// Resize, Shape, Constant, Range, ...
void add_shape_converters(std::vector<Converter>& out);

/// RNN, GRU, LSTM (converters_rnn.cc).
void add_rnn_converters(std::vector<Converter>& out);

/// MatMulInteger, QLinearMatMul (converters_quant.cc).
void add_quant_converters(std::vector<Converter>& out);

/// Integer input `x` (uint8 or int8) minus its zero point, input `zp_input` (absent: 0), in
/// int32; a zero point is a scalar (or [1]) or, when `axis` >= 0, one value per index of
/// that axis; an int32 x without one is taken as already centred. `what` names x in errors.
te::Tensor centered_int32(const ConvertContext& c, size_t x_input, size_t zp_input, int axis,
                          const std::string& what);
/// A float32 scale input: a scalar (or [1]) or, when `axis` >= 0, one per index of x's `axis`;
/// its value at `index` along that axis.
te::Expr scale_at(const ConvertContext& c, size_t scale_input, const te::Tensor& x, int axis,
                  const te::Expr& index, const std::string& what);
/// The int32 accumulator `acc` requantized as ONNX Runtime does:
/// saturate(round_even(acc * multiplier(o)) + zero_point) in the zero point's type (uint8 when
/// absent), the zero point (a scalar) being input `zp_input`; op `name`.
te::Tensor requantize(const ConvertContext& c, const te::Tensor& acc,
                      const std::function<te::Expr(const std::vector<te::Var>&)>& multiplier,
                      size_t zp_input, const std::string& name);

/// Einsum (converters_einsum.cc).
std::vector<ConvertOutput> einsum(const ConvertContext& c);

/// A single te output.
inline std::vector<ConvertOutput> one(te::Tensor t) { return {ConvertOutput(std::move(t))}; }

}  // namespace tuner::graph::detail
