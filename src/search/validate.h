// Validation after tuning. The best of hundreds of noisy measurements is partly the luckiest
// one (the winner's curse): on resnet18, per-task gains of 1.2-1.4x in the database came out
// at 0.8-1.07x when the same candidates were measured again. So each task's few fastest
// distinct schedules and its fallback are measured again, in turn, under the same conditions,
// and compile chooses by these measurements (compile/schedule_choice.cc). They are recorded
// under the worker db::kValidationWorker and no tuning run: they are not trials.
#pragma once

#include <functional>
#include <vector>

#include "search/task_tuner.h"

namespace tuner::search {

struct ValidateOptions {
  /// Distinct schedules per task (its fastest records), besides its fallback.
  int top = 3;
  /// Times each is measured; rounds alternate the order.
  int rounds = 3;
};

/// Measures every task's `top` fastest distinct schedules and its fallback `rounds` times in
/// turn and records each measurement; returns the number of records committed. `on_task` is
/// called before each task (index, count); `should_stop` is polled between tasks. Tasks
/// with fewer than two candidates are skipped.
int validate_best(const std::vector<TuneTask>& tasks, const ValidateOptions& opts,
                  db::Database& db, measure::Builder& builder, measure::Runner& runner,
                  const std::function<void(size_t, size_t)>& on_task = {},
                  const std::function<bool()>& should_stop = {});

}  // namespace tuner::search
