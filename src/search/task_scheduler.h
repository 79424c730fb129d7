// The task scheduler of whole-model tuning: which task gets the next measurement round.
// After a round-robin warm-up, the round goes to the task whose tuning promises the largest
// drop of the model's estimated latency, sum(weight x best time) — Ansor's gradient rule: a
// mix of the recent improvement (backward, over a window of rounds) and an optimistic forward
// estimate (the task keeps improving at its average rate so far).
#pragma once

#include <string>
#include <vector>

namespace tuner::search {

struct SchedulerOptions {
  double alpha = 0.2;  // weight of the backward (recent) term
  int window = 3;      // rounds the backward term looks back
  /// A task whose rounds so far all failed is set aside after this many rounds.
  int max_failing_rounds = 2;
};

class TaskScheduler {
 public:
  /// weights[i]: how often task i runs per model inference.
  explicit TaskScheduler(std::vector<double> weights, SchedulerOptions opts = {});

  /// The task to tune next, or -1 when every task is finished or set aside.
  int next() const;
  /// Records a round of task i: trials it measured and its best time after the round
  /// (seconds; infinity while nothing succeeded); `finished` when it stopped early.
  void update(int i, int trials, double best_seconds, bool finished);
  /// Task i was tuned before (by another run): its warm-up turn comes after those of the
  /// tasks never tuned, so small budgets spread over the runs reach every task.
  void tuned_before(int i) { tasks_[size_t(i)].tuned_before = true; }
  /// Sum of weight x best time over the tasks (infinity while some task has none).
  double estimated_latency() const;
  /// The gradient the rule computes for task i (for tests and logs).
  double gradient(int i) const;

  int trials(int i) const { return tasks_[size_t(i)].trials; }
  int rounds(int i) const { return int(tasks_[size_t(i)].best.size()); }
  bool done(int i) const { return tasks_[size_t(i)].done; }
  size_t size() const { return tasks_.size(); }

 private:
  struct Task {
    double weight = 1;
    std::vector<double> best;    // best time after each round
    std::vector<int> trials_at;  // total trials after each round
    int trials = 0;
    bool done = false;
    bool tuned_before = false;
  };
  std::vector<Task> tasks_;
  SchedulerOptions opts_;
};

}  // namespace tuner::search
