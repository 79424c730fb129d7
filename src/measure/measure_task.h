// A workload to measure candidates of: the DAG, the target and the inputs (from a seed).
// A runner prepares a task once (inputs and reference outputs) and reuses it for every round.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/target.h"
#include "ops/host_tensor.h"
#include "te/compute_dag.h"

namespace tuner::measure {

struct MeasureTask {
  te::ComputeDAG dag;
  codegen::Target target;
  /// Seed of the random inputs (ops::random_inputs: floats in [-1, 1], integers in [-10, 10]).
  uint64_t input_seed = 0;
  /// Explicit inputs in dag.inputs() order, used instead of random ones when not empty (ops
  /// whose valid inputs are constrained: gather indices, positive values for log, ...).
  std::vector<ops::HostTensor> inputs;
  /// Expected outputs in dag.outputs() order (e.g. the op's naive reference computed on this
  /// host); when empty, the runner computes them with the untransformed schedule in its child.
  /// Requires explicit inputs.
  std::vector<ops::HostTensor> expected;

  /// Identity of the prepared data: workload hash, target, seed (random inputs only) and the
  /// inputs and expected outputs when given.
  std::string key() const;
};

}  // namespace tuner::measure
