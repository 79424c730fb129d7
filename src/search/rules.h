// Search-space rules, one file each. Every rule applies to one stage of the schedule being
// built and draws its choices from sampling instructions.
#pragma once

#include <string>

#include "schedule/schedule.h"
#include "schedule/winograd_schedule.h"
#include "search/space.h"

namespace tuner::search {

/// Inlines injective stages into their readers (rule_auto_inline.cc).
void rule_auto_inline(schedule::Schedule& s);

/// The stages a tiling of `stage` works on: `outer` writes the result (its elementwise
/// epilogue, else a cache_write copy made here) and `local` computes the reduction.
struct TilingStages {
  std::string outer, local;
};
TilingStages tiling_stages(schedule::Schedule& s, const std::string& stage);

/// Multi-level tiling SSRSRS of a matmul/conv-like reduction, its result written through a
/// register tile computed at the second spatial level of the stage that writes it (the
/// elementwise epilogue, or a cache_write copy) (rule_multi_level_tiling.cc).
void rule_multi_level_tiling(schedule::Schedule& s, const std::string& stage, const SpaceOptions& o);

/// Reductions with little spatial parallelism may be split with rfactor so the reduction
/// itself runs in parallel; others with a long innermost reduction may be vectorized across
/// it, also through rfactor (rule_rfactor.cc). Returns false when it did not apply.
bool rule_rfactor(schedule::Schedule& s, const std::string& stage, const SpaceOptions& o);

/// Parallel outer loops and a vectorized innermost loop of a stage computed at root
/// (rule_parallel_vectorize.cc).
void rule_parallel_vectorize(schedule::Schedule& s, const std::string& stage, const SpaceOptions& o);

/// Samples where a stage is computed: inline, root, or at a loop of its consumer
/// (rule_compute_location.cc). Returns the location kind chosen.
schedule::Location rule_compute_location(schedule::Schedule& s, const std::string& stage);

/// A Winograd convolution in one kernel (schedule_winograd_conv) with sampled block rows and
/// register tile (rule_winograd.cc). Returns the stages it scheduled.
std::vector<std::string> rule_winograd(schedule::Schedule& s, const schedule::WinogradStages& w,
                                       const SpaceOptions& o);

// ---- GPU rules (SpaceOptions::gpu) ----

/// Multi-level tiling SSSRRSRS of a matmul/conv-like reduction for a GPU: spatial levels bound
/// to blockIdx.x / vthread / threadIdx.x, the result accumulated in a local tile computed at
/// the thread loop, the operands staged in shared memory at the outer reduction loop with a
/// cooperative fetch over the block's threads (rule_gpu_multi_level_tiling.cc).
void rule_gpu_multi_level_tiling(schedule::Schedule& s, const std::string& stage, const SpaceOptions& o);

/// Binds the outer spatial loops of a root stage over blocks and threads (a sampled thread
/// count) and samples its auto-unroll step (rule_gpu_auto_bind.cc).
void rule_gpu_auto_bind(schedule::Schedule& s, const std::string& stage, const SpaceOptions& o);

/// A reduction with few outputs and a long reduction is split with rfactor so partial results
/// are computed by many threads (a second kernel combines them); the simple stand-in for a
/// cross-thread reduction (rule_gpu_rfactor.cc). Returns the new .rf stage, or "".
std::string rule_gpu_rfactor(schedule::Schedule& s, const std::string& stage, const SpaceOptions& o);

}  // namespace tuner::search
