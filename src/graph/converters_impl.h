// Internal to the converter registry: each category file adds its operators, and the helpers
// they share.
#pragma once

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

/// Einsum (converters_einsum.cc).
std::vector<ConvertOutput> einsum(const ConvertContext& c);

/// A single te output.
inline std::vector<ConvertOutput> one(te::Tensor t) { return {ConvertOutput(std::move(t))}; }

}  // namespace tuner::graph::detail
