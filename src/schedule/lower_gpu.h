// GPU lowering: a scheduled DAG to one or more GPU kernels (one per stage computed at root,
// launched in order; intermediate root buffers become global workspaces). Loops bound to
// blockIdx/threadIdx become those indices (launch dimensions: the largest bound extent per
// index, smaller loops guarded), vthreads unrolled loops, shared buffers hoisted to the
// kernel, and barriers are inserted around shared-memory writes and reads.
#pragma once

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "schedule/lower.h"
#include "schedule/state.h"
#include "te/expr.h"

namespace tuner::schedule {

/// One kernel of a GPU function.
struct GpuKernelIR {
  std::string name;
  te::Stmt body;
  std::array<int64_t, 3> grid{1, 1, 1}, block{1, 1, 1};
  /// The variables that stand for blockIdx.* / threadIdx.* in `body` (kinds BlockIdxX...).
  std::vector<std::pair<te::ForKind, te::Var>> index_vars;
  /// Shared buffers, declared once per kernel (one copy per block).
  std::vector<te::Buffer> shared;
  int64_t shared_bytes = 0;  // static shared memory per block
  int64_t local_bytes = 0;   // local arrays per thread
  int64_t max_vthread = 1;   // product of nested vthread extents (largest)
  int64_t threads_per_block() const { return block[0] * block[1] * block[2]; }
};

/// A lowered GPU function: every kernel takes all `params` (inputs, outputs, workspaces).
struct GpuLoweredFunc {
  std::string name;
  std::vector<te::Buffer> params;
  int num_inputs = 0, num_outputs = 0;
  std::vector<GpuKernelIR> kernels;
  /// The kernels' loop IR with their launch dimensions, printed.
  std::string str() const;
};

/// Lowers a scheduled DAG for a GPU. Schedules that cannot run correctly on a GPU (a local
/// stage with thread-bound loops, a barrier needed in divergent code, ...) throw ScheduleError.
GpuLoweredFunc lower_gpu(const State& state, const std::string& name, const LowerOptions& opts = {});

}  // namespace tuner::schedule
