// Compiles a schedule for the host, runs it on the op's inputs and compares with the
// reference outputs.
#pragma once

#include <string>
#include <vector>

#include "codegen/compile.h"
#include "ops/registry.h"
#include "runtime/thread_pool.h"

namespace tuner::testing {

/// An op instance with its inputs and reference outputs, ready to check kernels against.
struct OpCase {
  const ops::OpDef* def;
  ops::Params params;
  te::ComputeDAG dag;
  std::vector<ops::HostTensor> inputs, expected;

  OpCase(const std::string& op, const std::vector<std::string>& params, uint64_t seed = 1);
  std::string str() const;
};

/// Puts NaN into every float input (a different stride per input, so an operand pair meets
/// with NaN on either side, both or none) and recomputes the reference outputs.
void poison_with_nan(OpCase& c);

/// Runs the kernel of `state` on the case; returns an empty string when every output
/// matches (atol at least the op's own), else a description of the mismatch.
std::string check_schedule(const OpCase& c, const schedule::State& state, double rtol, double atol,
                           const codegen::CompileOptions& opts = {});

/// The host target (cached).
const codegen::Target& host_target();
/// A process-wide two-thread pool.
runtime::ThreadPool& test_pool();

}  // namespace tuner::testing
