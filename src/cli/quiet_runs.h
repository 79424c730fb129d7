// Kernel times of a model's timed runs, made comparable across builds on a shared, noisy
// machine: the builds run in turn within each round (cli/model_common.h run_in_turn), so one
// sample per build and round, the median of that round's runs, spans the same moments for
// every build; a burst of load costs each build the samples of the rounds it hit, and the
// medians over rounds stay put. (Keeping only the runs near each build's own fastest did not:
// a build with one lucky fast streak kept just those runs, and a schedule 1.7x slower in the
// model than its fallback won on 2 samples.)
#pragma once

#include <cstddef>
#include <map>
#include <utility>
#include <vector>

#include "db/record.h"

namespace tuner::cli {

/// Per task, one kernel time per round.
using TaskTimes = std::vector<std::vector<double>>;

/// One timed run of build `build` in round `round`: its per-task kernel times (< 0: none).
struct TimedRun {
  size_t build;
  size_t round;
  std::vector<double> task_seconds;
};

/// Per build and task, in round order, the median kernel time of each round's runs.
inline std::vector<TaskTimes> round_medians(const std::vector<TimedRun>& runs, size_t builds,
                                            size_t num_tasks) {
  std::vector<TaskTimes> out(builds, TaskTimes(num_tasks));
  for (size_t b = 0; b < builds; ++b)
    for (size_t t = 0; t < num_tasks; ++t) {
      std::map<size_t, std::vector<double>> by_round;
      for (const auto& r : runs)
        if (r.build == b && r.task_seconds[t] >= 0) by_round[r.round].push_back(r.task_seconds[t]);
      for (auto& [round, v] : by_round) out[b][t].push_back(db::median_of(std::move(v)));
    }
  return out;
}

}  // namespace tuner::cli
