// Shared by the GPU codegen tests: what is missing to run them (said in GTEST_SKIP), and a
// check of a lowered GPU function on PoCL against an op case's reference.
#pragma once

#include <string>
#include <vector>

#include "kernel_check.h"
#include "opencl_runner.h"
#include "schedule/lower_gpu.h"

namespace tuner::testing {

/// Empty when NVRTC is available, else what is missing.
std::string nvrtc_missing();

/// Compares `outs` with the case's reference (by default fp32's rtol 1e-3, atol 2e-3); empty
/// when equal.
std::string compare_outputs(const OpCase& c, const std::vector<ops::HostTensor>& outs,
                            double rtol = 1e-3, double atol = 2e-3);

/// The cuda targets the tests compile for.
const std::vector<std::string>& gpu_archs();

}  // namespace tuner::testing
