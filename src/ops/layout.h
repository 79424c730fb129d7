// Weight layouts chosen at compile time: the weights are constants at inference time, so a
// kernel may read them in whatever layout suits it, paid once when the model is compiled.
#pragma once

#include "ops/host_tensor.h"

namespace tuner::ops {

/// Packs a conv weight [K, C, KH, KW] into [K/b, C, KH, KW, b] (see packed_weight_shape).
HostTensor pack_conv_weight(const HostTensor& kcrs, int64_t block);
/// The inverse of pack_conv_weight.
HostTensor unpack_conv_weight(const HostTensor& packed);
/// Packs a matmul's B [k, n] into [n/b, k, b]: each block of b output columns reads one
/// contiguous panel (see matmul_packed).
HostTensor pack_matmul_weight(const HostTensor& kn, int64_t block);
/// The inverse of pack_matmul_weight.
HostTensor unpack_matmul_weight(const HostTensor& packed);
/// Packs a recurrent layer's W or R [dirs, n, k] (ONNX's layout, n = gates x hidden) into
/// [dirs, n/b, k, b]: per direction, the panels of pack_matmul_weight of its transpose.
HostTensor pack_recurrent_weight(const HostTensor& dnk, int64_t block);
/// A conv weight [K, C, KH, KW] of values in [-128, 127] as int32 words [K, ceil(C/4), KH, KW]
/// holding input channels 4c..4c+3 in bytes 0..3 (missing channels 0): the weight of
/// Conv2dAttrs::byte_dot (plain, or packed by pack_conv_weight).
HostTensor byte_words(const HostTensor& kcrs);
/// The transpose of a 2-D tensor.
HostTensor transpose_matrix(const HostTensor& m);

}  // namespace tuner::ops
