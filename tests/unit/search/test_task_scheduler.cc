// The gradient rule of the whole-model task scheduler, on simulated tuning curves.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "search/task_scheduler.h"

namespace tuner::search {

TEST(TaskScheduler, WarmsUpRoundRobinThenFavoursWeightedPotential) {
  // Three tasks with the same tuning curve (best = base / (1 + trials/64)), but weights 1, 1, 6:
  // the heavy task must get most of the rounds.
  TaskScheduler s({1, 1, 6});
  std::vector<int> order;
  for (int round = 0; round < 30; ++round) {
    int i = s.next();
    ASSERT_GE(i, 0);
    order.push_back(i);
    double trials = s.trials(i) + 64;
    s.update(i, 64, 1e-3 / (1 + trials / 64), false);
  }
  EXPECT_EQ(order[0], 0);
  EXPECT_EQ(order[1], 1);
  EXPECT_EQ(order[2], 2);
  EXPECT_GT(s.rounds(2), s.rounds(0) + s.rounds(1));
  EXPECT_GT(s.rounds(0), 1);  // the light tasks are not starved
}

// Tasks another run tuned warm up last: a budget too small for every task, spent again and
// again, reaches them all (each new run warmed up tasks 0..4 of 9 and never the rest).
TEST(TaskScheduler, TasksTunedBeforeWarmUpLast) {
  TaskScheduler s({1, 1, 1, 1});
  s.tuned_before(0);
  s.tuned_before(2);
  std::vector<int> order;
  for (int round = 0; round < 4; ++round) {
    int i = s.next();
    order.push_back(i);
    s.update(i, 8, 1e-3, false);
  }
  EXPECT_EQ(order, (std::vector<int>{1, 3, 0, 2}));
}

TEST(TaskScheduler, RecentImprovementBreaksTies) {
  // Same weight, trials and best time now; task 1 got there recently, task 0 long ago.
  TaskScheduler s({1, 1});
  for (double b : {1e-3, 1e-3, 1e-3}) s.update(0, 64, b, false);
  for (double b : {4e-3, 2e-3, 1e-3}) s.update(1, 64, b, false);
  EXPECT_GT(s.gradient(1), s.gradient(0));
  EXPECT_EQ(s.next(), 1);
  // A ten times heavier task wins over an equal lighter one.
  TaskScheduler t({1, 10});
  t.update(0, 64, 1e-3, false);
  t.update(1, 64, 1e-3, false);
  EXPECT_EQ(t.next(), 1);
}

TEST(TaskScheduler, FailingAndFinishedTasksAreSetAside) {
  TaskScheduler s({1, 1});
  double inf = std::numeric_limits<double>::infinity();
  s.update(0, 64, inf, false);
  s.update(1, 64, 2e-3, false);
  EXPECT_TRUE(std::isinf(s.estimated_latency()));
  s.update(0, 64, inf, false);
  EXPECT_TRUE(s.done(0));
  EXPECT_EQ(s.next(), 1);
  s.update(1, 10, 1e-3, true);
  EXPECT_EQ(s.next(), -1);
}

}  // namespace tuner::search
