// Internal to the registry: each category file adds its ops (registry_*.cc).
#pragma once

#include <vector>

#include "ops/registry.h"

namespace tuner::ops::detail {

/// matmul, dense, conv2d, depthwise_conv2d, pooling.
void add_nn_ops(std::vector<OpDef>& ops);
/// Unary, binary, where, cast.
void add_elementwise_ops(std::vector<OpDef>& ops);
/// Reductions, softmax, log_softmax, layer_norm, softmax_layer_norm.
void add_reduce_ops(std::vector<OpDef>& ops);
/// transpose, reshape, concat, pad, slice, gather.
void add_transform_ops(std::vector<OpDef>& ops);

/// Random inputs in [-1, 1] (the make_inputs of most ops).
inline std::vector<HostTensor> default_inputs(const Params&, const te::ComputeDAG& dag,
                                              uint64_t seed) {
  return random_inputs(dag, seed);
}

/// The standard "dtype" parameter (default float32).
inline OpParam dtype_param() { return {"dtype", "float32", "element type"}; }

}  // namespace tuner::ops::detail
