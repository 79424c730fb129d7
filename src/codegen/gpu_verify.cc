#include "codegen/gpu_verify.h"

#include <fmt/format.h>

namespace tuner::codegen {

GpuLimits gpu_limits(const Target&) { return GpuLimits{}; }

std::vector<std::string> verify_gpu(const schedule::GpuLoweredFunc& f, const GpuLimits& lim) {
  std::vector<std::string> out;
  static const char* axis = "xyz";
  for (auto& k : f.kernels) {
    int64_t threads = k.threads_per_block();
    if (threads > lim.max_threads_per_block)
      out.push_back(fmt::format("{}: {} threads per block ({}x{}x{}) exceed the limit of {}", k.name, threads,
                                k.block[0], k.block[1], k.block[2], lim.max_threads_per_block));
    for (int a = 0; a < 3; ++a) {
      if (k.block[size_t(a)] > lim.max_block[size_t(a)])
        out.push_back(fmt::format("{}: blockDim.{} = {} exceeds the limit of {}", k.name, axis[a],
                                  k.block[size_t(a)], lim.max_block[size_t(a)]));
      if (k.grid[size_t(a)] > lim.max_grid[size_t(a)])
        out.push_back(fmt::format("{}: gridDim.{} = {} exceeds the limit of {}", k.name, axis[a],
                                  k.grid[size_t(a)], lim.max_grid[size_t(a)]));
    }
    if (k.shared_bytes > lim.max_shared_bytes)
      out.push_back(fmt::format("{}: {} bytes of shared memory per block exceed the limit of {} bytes ({} KiB)",
                                k.name, k.shared_bytes, lim.max_shared_bytes, lim.max_shared_bytes / 1024));
    if (k.local_bytes > lim.max_local_bytes)
      out.push_back(fmt::format("{}: {} bytes of local arrays per thread exceed the limit of {} bytes", k.name,
                                k.local_bytes, lim.max_local_bytes));
    if (k.max_vthread > lim.max_vthread)
      out.push_back(fmt::format("{}: {} virtual threads exceed the limit of {}", k.name, k.max_vthread,
                                lim.max_vthread));
  }
  return out;
}

std::vector<std::string> verify_gpu_registers(const std::string& kernel, int regs, int64_t threads,
                                              const GpuLimits& lim) {
  std::vector<std::string> out;
  if (regs > lim.max_registers_per_thread)
    out.push_back(fmt::format("{}: {} registers per thread exceed the limit of {}", kernel, regs,
                              lim.max_registers_per_thread));
  if (int64_t(regs) * threads > lim.max_registers_per_block)
    out.push_back(fmt::format("{}: {} registers x {} threads = {} registers per block exceed the limit of {}",
                              kernel, regs, threads, int64_t(regs) * threads, lim.max_registers_per_block));
  return out;
}

}  // namespace tuner::codegen
