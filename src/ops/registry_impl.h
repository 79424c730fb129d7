// Internal to the registry: each category file adds its ops (registry_*.cc).
#pragma once

#include <string>
#include <vector>

#include "ops/elementwise.h"
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

/// f(inputs) for an op that adds up many terms, with float16 inputs widened to float32 and
/// each float32 output rounded to float16 once, as the ONNX converters do (HalfInputs):
/// summed in float16, reduce_sum over 5000 elements was 1.3 off and every op's check failed.
template <class F>
std::vector<te::Tensor> in_float32(const std::vector<te::Tensor>& inputs, F f) {
  bool half = false;
  for (const auto& t : inputs) half |= t.dtype() == te::DataType::f16();
  if (!half) return f(inputs);
  std::vector<te::Tensor> wide;
  for (const auto& t : inputs)
    wide.push_back(t.dtype() == te::DataType::f16() ? cast(t, te::DataType::f32(), t->name + "_f32") : t);
  std::vector<te::Tensor> out = f(wide);
  for (auto& t : out)
    if (t.dtype() == te::DataType::f32()) t = cast(t, te::DataType::f16(), t->name + "_f16");
  return out;
}

/// The standard "dtype" parameter (default float32).
inline OpParam dtype_param() { return {"dtype", "float32", "element type"}; }

}  // namespace tuner::ops::detail
