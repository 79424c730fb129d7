// Kernel times of a model's timed runs with the runs slowed by other load left out: on a
// shared machine a burst of load hits whole blocks of runs, and their medians with it, so the
// in-model validation (cli/model_validate.h) picked slower schedules after a noisy minute.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace tuner::cli {

/// Per task, the kernel times of the runs kept.
using TaskTimes = std::vector<std::vector<double>>;

/// One timed run of build `build`: its latency and its per-task kernel times (< 0: none).
struct TimedRun {
  size_t build;
  double seconds;
  std::vector<double> task_seconds;
};

/// Per build and task, the kernel times of the runs within `slack` of their build's fastest.
inline std::vector<TaskTimes> quiet_times(const std::vector<TimedRun>& runs, size_t builds,
                                          size_t num_tasks, double slack = 1.1) {
  std::vector<double> fastest(builds, INFINITY);
  for (const auto& r : runs) fastest[r.build] = std::min(fastest[r.build], r.seconds);
  std::vector<TaskTimes> out(builds, TaskTimes(num_tasks));
  for (const auto& r : runs) {
    if (r.seconds > slack * fastest[r.build]) continue;
    for (size_t t = 0; t < num_tasks; ++t)
      if (r.task_seconds[t] >= 0) out[r.build][t].push_back(r.task_seconds[t]);
  }
  return out;
}

}  // namespace tuner::cli
