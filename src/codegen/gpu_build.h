// One call from a scheduled DAG to a compiled CUDA candidate: lower for the GPU, verify
// against the target's limits, emit CUDA C, compile with NVRTC (PTX + cubin) and check the
// registers. What a GPU runner needs to launch it is in GpuBuild.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "codegen/gpu_verify.h"
#include "codegen/target.h"
#include "schedule/lower_gpu.h"
#include "schedule/state.h"

namespace tuner::codegen {

/// A schedule the GPU verifier rejects (too many threads, too much shared memory, ...):
/// an INSTANTIATION error; what() lists every problem with its numbers.
class GpuLimitError : public schedule::ScheduleError {
 public:
  using schedule::ScheduleError::ScheduleError;
};

/// A kernel parameter: a device buffer (inputs, outputs, then workspaces for intermediates).
struct GpuParam {
  enum Role { Input, Output, Workspace };
  std::string name;
  te::DataType dtype;
  std::vector<int64_t> shape;
  Role role = Input;
  int64_t bytes() const;
};

/// One kernel launch; a candidate's kernels run in order, each taking every GpuParam.
struct GpuKernel {
  std::string entry;  // extern "C" name in the cubin
  std::array<int64_t, 3> grid{1, 1, 1}, block{1, 1, 1};
  int64_t dynamic_shared_bytes = 0;  // always 0 today (shared memory is static)
  int registers = 0;                 // per thread, from ptxas
  int64_t shared_bytes = 0;          // static, from ptxas
  int64_t spill_stores = 0, spill_loads = 0, stack_bytes = 0;
};

struct GpuBuild {
  std::string arch;    // sm_XX
  std::string source;  // the CUDA C
  std::string ptx, cubin;
  std::vector<GpuParam> params;
  std::vector<GpuKernel> kernels;
  double compile_seconds = 0;  // NVRTC only
};

struct GpuBuildOptions {
  schedule::LowerOptions lower;
  /// Run the verifier (before and after compilation).
  bool verify = true;
};

/// A candidate lowered, verified and printed as CUDA C, before NVRTC: its source identifies
/// the program (a builder compiles each distinct source once).
struct GpuSource {
  schedule::GpuLoweredFunc func;
  std::string source;
};

/// Lowers, verifies and emits CUDA C; throws like build_gpu_kernel, NvrtcError excepted.
GpuSource prepare_gpu_kernel(const schedule::State& state, const Target& target,
                             const std::string& name = "kernel", const GpuBuildOptions& opts = {});
/// Compiles a prepared kernel with NVRTC for target.arch and checks its registers.
GpuBuild compile_gpu_kernel(const GpuSource& src, const Target& target,
                            const std::string& name = "kernel", const GpuBuildOptions& opts = {});

/// Lowers, verifies, emits CUDA C and compiles it with NVRTC for target.arch. Throws
/// ScheduleError (GpuLimitError when over a limit) for a schedule that cannot run, NvrtcError
/// when NVRTC rejects the source, UserError when Tuner was built without NVRTC.
GpuBuild build_gpu_kernel(const schedule::State& state, const Target& target,
                          const std::string& name = "kernel", const GpuBuildOptions& opts = {});

/// Lowers and verifies only (no compiler needed); throws like build_gpu_kernel.
schedule::GpuLoweredFunc lower_and_verify_gpu(const schedule::State& state, const Target& target,
                                              const std::string& name, const GpuBuildOptions& opts = {});

/// The parameter list of a lowered function.
std::vector<GpuParam> gpu_params(const schedule::GpuLoweredFunc& f);

}  // namespace tuner::codegen
