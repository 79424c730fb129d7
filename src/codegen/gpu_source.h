// C source for GPU kernels, one generator with two dialects: CUDA C (compiled by NVRTC for
// NVIDIA GPUs) and OpenCL C (run on PoCL to check GPU schedules without a GPU). The
// dialects differ only in keywords, index builtins, barriers and math function names.
#pragma once

#include <string>
#include <vector>

#include "schedule/lower_gpu.h"

namespace tuner::codegen {

enum class GpuDialect { Cuda, OpenCL };

/// The source of every kernel of `funcs` in one translation unit (one compile for all):
/// a prelude of helpers, then `extern "C" __global__` (CUDA) or `__kernel` (OpenCL)
/// functions named after the kernels. Kernel parameters are the function's params in order.
std::string emit_gpu_source(const std::vector<const schedule::GpuLoweredFunc*>& funcs, GpuDialect d);

/// The same for one function.
std::string emit_gpu_source(const schedule::GpuLoweredFunc& func, GpuDialect d);

}  // namespace tuner::codegen
