#include "search/task_scheduler.h"

#include <cmath>
#include <limits>

#include "support/error.h"

namespace tuner::search {

TaskScheduler::TaskScheduler(std::vector<double> weights, SchedulerOptions opts) : opts_(opts) {
  for (double w : weights) {
    Task t;
    t.weight = w;
    tasks_.push_back(t);
  }
}

double TaskScheduler::gradient(int i) const {
  const Task& t = tasks_[size_t(i)];
  if (t.best.empty() || t.trials == 0) return std::numeric_limits<double>::infinity();
  double now = t.best.back();
  if (!std::isfinite(now)) return 0;
  // Backward: improvement per trial over the last `window` rounds.
  size_t k = t.best.size() - 1, from = k >= size_t(opts_.window) ? k - size_t(opts_.window) : 0;
  double backward = 0;
  if (from < k && std::isfinite(t.best[from]))
    backward = (t.best[from] - now) / double(t.trials_at[k] - t.trials_at[from]);
  // Forward: the next trial improves as much as an average trial did so far, the whole time
  // counted from zero (optimistic, so tasks with little tuning get their turn).
  double forward = now / double(t.trials);
  return t.weight * (opts_.alpha * backward + (1 - opts_.alpha) * forward);
}

int TaskScheduler::next() const {
  // Warm-up: every task gets a round first, in order, those never tuned before the others.
  for (bool before : {false, true})
    for (size_t i = 0; i < tasks_.size(); ++i)
      if (!tasks_[i].done && tasks_[i].best.empty() && tasks_[i].tuned_before == before)
        return int(i);
  int pick = -1;
  double best_g = -1;
  for (size_t i = 0; i < tasks_.size(); ++i) {
    if (tasks_[i].done) continue;
    double g = gradient(int(i));
    if (g > best_g) {
      best_g = g;
      pick = int(i);
    }
  }
  return pick;
}

void TaskScheduler::update(int i, int trials, double best_seconds, bool finished) {
  INTERNAL_CHECK(i >= 0 && size_t(i) < tasks_.size()) << "bad task " << i;
  Task& t = tasks_[size_t(i)];
  t.trials += trials;
  t.best.push_back(best_seconds);
  t.trials_at.push_back(t.trials);
  bool never_ok = !std::isfinite(best_seconds) && int(t.best.size()) >= opts_.max_failing_rounds;
  if (finished || never_ok || trials == 0) t.done = true;
}

double TaskScheduler::estimated_latency() const {
  double sum = 0;
  for (const Task& t : tasks_) {
    if (t.best.empty() || !std::isfinite(t.best.back()))
      return std::numeric_limits<double>::infinity();
    sum += t.weight * t.best.back();
  }
  return sum;
}

}  // namespace tuner::search
