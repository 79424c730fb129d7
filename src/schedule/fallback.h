// Hand-written default schedules: correct and reasonable code for any DAG, no tuning needed.
#pragma once

#include "schedule/schedule.h"

namespace tuner::schedule {

struct FallbackOptions {
  /// float32 lanes of the target's vector registers (16 for AVX-512).
  int vector_lanes = 16;
};

/// The default schedule of a DAG, as a replayable Schedule.
Schedule fallback_schedule(const te::ComputeDAG& dag, const FallbackOptions& opts = {});

/// Whether `stage` is a reduction (computed at root, untransformed) whose innermost reduction
/// is long enough to vectorize through rfactor: at least two whole vectors of `lanes`.
bool can_vectorize_row_reduction(const State& st, const std::string& stage, int lanes);
/// Vectorizes such a reduction: `stage.rf` = one vector of `lanes` partial results per
/// output, computed inside the output's fused, parallel spatial loop and summed across lanes
/// by `stage` (softmax's and layer norm's row sums, max and variance).
void vectorize_row_reduction(Schedule& s, const std::string& stage, int lanes);

}  // namespace tuner::schedule
