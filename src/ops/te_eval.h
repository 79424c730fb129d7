// A naive interpreter of te compute definitions: every op is evaluated point by point by
// recursive expression evaluation. Slow and obviously correct; it checks compute definitions
// against the references without the compiler. Reads out of bounds are reported as errors.
#pragma once

#include <vector>

#include "ops/host_tensor.h"
#include "te/compute_dag.h"

namespace tuner::ops {

/// Evaluates `dag` on `inputs` (in dag.inputs() order, shapes and dtypes checked) and returns
/// the outputs in dag.outputs() order. Floats are computed in float (float16 rounded to half
/// after every operation), integers in int64 wrapped to their width, bools as 0/1.
std::vector<HostTensor> evaluate_dag(const te::ComputeDAG& dag,
                                     const std::vector<HostTensor>& inputs);

/// Like evaluate_dag, but returns the tensor of every op (placeholders included) in
/// dag.ops() order, for inspecting intermediate results.
std::vector<HostTensor> evaluate_all_ops(const te::ComputeDAG& dag,
                                         const std::vector<HostTensor>& inputs);

}  // namespace tuner::ops
