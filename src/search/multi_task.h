// Tuning several tasks under one trial budget (a whole model, or one operator as a single
// task): the task scheduler picks the task of each round, tune_task runs it, records go to
// the database under one tuning run. Used by `tuner tune` and by the server's jobs, so a
// remote job runs exactly the local search with another Runner.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "search/task_tuner.h"

namespace tuner::search {

struct MultiTuneOptions {
  /// Measured candidates over all tasks (the budget of the run).
  int trials = 2000;
  /// Largest round; rounds are smaller when there are many tasks.
  int batch = 64;
  /// A task stops after this many trials without a 1% improvement (0: never).
  int early_stop = 200;
  uint64_t seed = 0;
  /// Cores the kernels may use (the search space's parallel loops).
  int num_cores = 2;
  /// Records are committed under this tuning run; its earlier records count as spent, so a
  /// run that was interrupted continues where it stopped.
  int64_t run_id = 0;
  /// Where records come from ("local", "remote", ...).
  std::string worker = "local";
};

/// The state after each round (and the result).
struct MultiTuneProgress {
  int spent = 0, budget = 0;
  int resumed_trials = 0;  // trials of the run found in the database at the start
  int last_task = -1;      // the task of the last round
  std::vector<double> best;      // per task, seconds (infinity: none yet)
  std::vector<double> baseline;  // per task, the fallback schedule's time (0: not measured)
  std::vector<int> trials;       // per task
  std::vector<double> seconds;   // per task, wall seconds of its rounds in this process
  std::vector<bool> done;        // per task, set aside by the scheduler (finished or failing)
  std::map<std::string, int> errors;
  double estimated_latency = 0;  // sum of weight x best (infinity while a task has none)
};

/// Tunes `tasks` (weights: how often each runs per inference) until the budget is spent,
/// every task is finished, or `should_stop` returns true (polled between rounds).
MultiTuneProgress tune_tasks(const std::vector<TuneTask>& tasks, const std::vector<double>& weights,
                             const MultiTuneOptions& opts, db::Database& db,
                             measure::Builder& builder, measure::Runner& runner,
                             costmodel::CostModel& model,
                             const std::function<void(const MultiTuneProgress&)>& on_round = {},
                             const std::function<bool()>& should_stop = {});

}  // namespace tuner::search
