// Random schedules for property tests: random primitives with random arguments, applied
// through the normal Schedule API. Invalid choices throw ScheduleError and are skipped.
#pragma once

#include "schedule/schedule.h"

namespace tuner::testing {

struct RandomScheduleStats {
  int applied = 0;
  int rejected = 0;
};

/// A schedule of `dag` built from `steps` random primitive applications.
schedule::Schedule random_schedule(const te::ComputeDAG& dag, uint64_t seed, int steps,
                                   RandomScheduleStats* stats = nullptr);

}  // namespace tuner::testing
