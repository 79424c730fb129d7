#include "search/multi_task.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "search/space_gpu.h"
#include "search/task_scheduler.h"
#include "support/error.h"

namespace tuner::search {

MultiTuneProgress tune_tasks(const std::vector<TuneTask>& tasks, const std::vector<double>& weights,
                             const MultiTuneOptions& opts, db::Database& db,
                             measure::Builder& builder, measure::Runner& runner,
                             costmodel::CostModel& model,
                             const std::function<void(const MultiTuneProgress&)>& on_round,
                             const std::function<bool()>& should_stop) {
  USER_CHECK(opts.trials > 0) << "--trials must be positive";
  USER_CHECK(!tasks.empty() && tasks.size() == weights.size()) << "no task to tune";
  const size_t n = tasks.size();
  TaskScheduler sched(weights);
  // Rounds small enough that the warm-up gives every task a turn within half the budget, and
  // of at least 8 candidates unless the caller's batch is smaller (--batch 1 was ignored).
  const int min_batch = std::clamp(opts.batch, 1, 8);
  int batch = std::clamp(opts.trials / std::max<int>(1, 2 * int(n)), min_batch,
                         std::max(min_batch, opts.batch));
  MultiTuneProgress p;
  p.budget = opts.trials;
  p.best.assign(n, std::numeric_limits<double>::infinity());
  p.baseline.assign(n, 0);
  p.trials.assign(n, 0);
  p.seconds.assign(n, 0);
  p.done.assign(n, false);
  std::vector<int> since_improvement(n, 0);
  // Each task's search lives across its turns: it remembers what it measured, and a task
  // whose space is exhausted proposes nothing and is set aside.
  std::vector<TaskSearchState> searches(n);
  int round = 0;
  const std::string target = tasks[0].target.str();
  for (size_t i = 0; i < n; ++i) {
    auto w = db.find_workload(tasks[i].dag.hash_hex());
    if (!w) continue;
    // A task tuned before (by any run) starts from its best and its fallback's time: the
    // summary and the estimated model latency show them before the task's first turn, and a
    // turn counts as an improvement only when it beats that best.
    auto top = db.top_k(w->id, target, 1);
    if (!top.empty()) {
      p.best[i] = *top[0].median;
      sched.tuned_before(int(i));
    }
    p.baseline[i] = searches[i].baseline = recorded_baseline(db, w->id, tasks[i]);
    // Trials this run already spent (an interrupted run, or a server restarted mid-job).
    if (opts.run_id) {
      db::RecordFilter f;
      f.workload_id = w->id;
      f.target = target;
      f.run_id = opts.run_id;
      int k = int(db.count_records(f));
      if (k == 0) continue;
      // Fewer than a round: a turn cut short (kill -9 after its fallback was recorded) is the
      // task's warm-up turn again, not a turn it had.
      if (k >= batch) sched.update(int(i), k, p.best[i], false);
      p.trials[i] = k;
      p.spent += k;
      round += (k + batch - 1) / batch;
    }
  }
  p.resumed_trials = p.spent;
  while (p.spent < opts.trials && !(should_stop && should_stop())) {
    int i = sched.next();
    if (i < 0) break;
    TuneOptions to;
    to.trials = std::min(batch, opts.trials - p.spent);
    to.batch = batch;
    to.early_stop = 0;
    to.seed = opts.seed * 1000003 + uint64_t(round);
    to.space = space_options_for(tasks[size_t(i)].target);
    to.space.num_cores = opts.num_cores;
    to.run_id = opts.run_id;
    to.worker = opts.worker;
    auto t0 = std::chrono::steady_clock::now();
    TuneResult r = tune_task(tasks[size_t(i)], to, db, builder, runner, model, {}, should_stop,
                             &searches[size_t(i)]);
    p.seconds[size_t(i)] +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto& rp = r.progress;
    size_t u = size_t(i);
    p.spent += rp.trials;
    p.trials[u] += rp.trials;
    ++round;
    if (rp.baseline_seconds > 0) p.baseline[u] = rp.baseline_seconds;
    bool improved = rp.best_seconds > 0 && rp.best_seconds < p.best[u] * 0.99;
    if (rp.best_seconds > 0) p.best[u] = std::min(p.best[u], rp.best_seconds);
    for (auto& [k, v] : rp.errors) p.errors[k] += v;
    // A task whose last early_stop trials brought no improvement is finished.
    since_improvement[u] = improved ? 0 : since_improvement[u] + rp.trials;
    bool finished =
        rp.trials == 0 || (opts.early_stop > 0 && since_improvement[u] >= opts.early_stop);
    sched.update(i, rp.trials, p.best[u], finished);
    for (size_t t = 0; t < n; ++t) p.done[t] = sched.done(int(t));
    p.last_task = i;
    p.estimated_latency = sched.estimated_latency();
    if (on_round) on_round(p);
  }
  return p;
}

}  // namespace tuner::search
