// Neural-network operators: matmul/dense, conv2d (NCHW, groups, depthwise), 2-D pooling.
// Tags: "matmul", "conv2d" (with a separate "pad" op when padded), "pool"; epilogues
// (bias, average division) are separate "injective" ops named <name>_bias / <name>.
#pragma once

#include <array>

#include <string>

#include "ops/shape.h"
#include "te/tensor.h"

namespace tuner::ops {

/// C[batch..., i, j] = sum_k A[batch..., i, k] * B[batch..., k, j] (B[..., j, k] when
/// transpose_b); batch dimensions broadcast like numpy. Tag "matmul", attrs {transpose_b}.
te::Tensor matmul(const te::Tensor& a, const te::Tensor& b, bool transpose_b = false,
                  const std::string& name = "matmul");
/// C[batch..., m, n] = A[batch..., m, k] x B with B packed [n/b, k, b] (pack_matmul_weight),
/// read at [j / b, k, j % b]: a block of output columns reads one contiguous panel. Tag
/// "matmul", attrs {transpose_b = 0, b_block = b}.
/// With `byte_dot`, A and B hold int32 words of 4 k's bytes each (byte_words_last, B's words
/// packed) and the product is te's dot_u8s8x4 (attr byte_dot = 1).
te::Tensor matmul_packed(const te::Tensor& a, const te::Tensor& b, const std::string& name = "matmul",
                         bool byte_dot = false);
/// data [M, K] x weight [N, K]^T (+ bias [N] as op <name>_bias when given).
te::Tensor dense(const te::Tensor& data, const te::Tensor& weight, const te::Tensor& bias = {},
                 const std::string& name = "dense");
/// NCHW conv2d with weight [K, C/groups, KH, KW]; padding becomes op <name>_pad (tag "pad"),
/// bias [K] op <name>_bias. Tag "conv2d"; attrs carry strides, dilations, pads, groups, kernel.
te::Tensor conv2d(const te::Tensor& data, const te::Tensor& weight, const Conv2dAttrs& attrs,
                  const te::Tensor& bias = {}, const std::string& name = "conv2d");
/// x [N, C, H, W] (uint8, or int8 read as x + 128) as int32 words [N, ceil(C/4), H, W]
/// holding channels 4c..4c+3 in bytes 0..3, the channels past C and the padding `pads` (top,
/// left, bottom, right) as `fill` (a uint8 value): the data of a Conv2dAttrs::byte_dot conv.
/// Tag "byte_words".
te::Tensor byte_words(const te::Tensor& x, int64_t fill, const std::array<int64_t, 4>& pads = {},
                      const std::string& name = "byte_words");
/// x [..., K] (uint8, or int8 read as x + 128) as int32 words [..., ceil(K/4)] of 4
/// consecutive elements (0 past K): the A of a byte_dot matmul_packed. Tag "byte_words".
te::Tensor byte_words_last(const te::Tensor& x, const std::string& name = "byte_words");
/// Transposed NCHW conv2d with weight [C, K/groups, KH, KW], as a conv2d (stride 1, the same
/// dilation) of the input spread by the strides and padded (op <name>_spread, tag "pad") with
/// the flipped weight (op <name>_weight); bias [K] op <name>_bias.
te::Tensor conv2d_transpose(const te::Tensor& data, const te::Tensor& weight,
                            const ConvTranspose2dAttrs& attrs, const te::Tensor& bias = {},
                            const std::string& name = "conv2d_transpose");
/// Max pooling (padding reads as -inf), optionally dilated. Tag "pool".
te::Tensor max_pool2d(const te::Tensor& data, const Pool2dAttrs& attrs,
                      const std::string& name = "max_pool2d");
/// Average pooling: window sum <name>_sum (tag "pool") then the division <name>.
te::Tensor avg_pool2d(const te::Tensor& data, const Pool2dAttrs& attrs,
                      const std::string& name = "avg_pool2d");
/// Mean over H and W of NCHW data, shape [N, C, 1, 1]: <name>_sum (tag "pool") then <name>.
te::Tensor global_avg_pool(const te::Tensor& data, const std::string& name = "global_avg_pool");
/// Max over H and W of NCHW data, shape [N, C, 1, 1] (tag "pool").
te::Tensor global_max_pool(const te::Tensor& data, const std::string& name = "global_max_pool");

}  // namespace tuner::ops
