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

}  // namespace tuner::schedule
