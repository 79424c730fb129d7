// The GPU verifier: checks a lowered GPU function against the target's limits before it is
// compiled (threads per block, launch dimensions, static shared memory, per-thread local
// arrays, vthreads) and, after compilation, its registers. Every problem is one precise line.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/target.h"
#include "schedule/lower_gpu.h"

namespace tuner::codegen {

struct GpuLimits {
  int64_t max_threads_per_block = 1024;
  std::array<int64_t, 3> max_block{1024, 1024, 64};
  std::array<int64_t, 3> max_grid{2147483647, 65535, 65535};
  /// Static shared memory per block (CUDA: 48 KiB without the opt-in for dynamic memory).
  int64_t max_shared_bytes = 48 * 1024;
  /// Local arrays per thread: beyond this they live in slow off-chip local memory.
  int64_t max_local_bytes = 16 * 1024;
  /// Product of nested vthread extents (each is an unrolled copy of the body).
  int64_t max_vthread = 8;
  int max_registers_per_thread = 255;
  int64_t max_registers_per_block = 65536;
};

/// The limits of a cuda target (the same for sm_70 through sm_90 as far as checked here).
GpuLimits gpu_limits(const Target& target);

/// Problems of `f` against `limits`, one line each naming the kernel and the numbers; empty
/// when it fits.
std::vector<std::string> verify_gpu(const schedule::GpuLoweredFunc& f, const GpuLimits& limits);

/// The register check after compilation: registers per thread and per block.
std::vector<std::string> verify_gpu_registers(const std::string& kernel, int registers,
                                              int64_t threads_per_block, const GpuLimits& limits);

}  // namespace tuner::codegen
