// Which timed runs of a model the in-model validation keeps (cli/quiet_runs.h).
#include <gtest/gtest.h>

#include "cli/quiet_runs.h"

namespace tuner::cli {

TEST(QuietRuns, RunsSlowedByOtherLoadAreLeftOut) {
  // Build 0: two quiet runs and one slowed 1.5x; build 1: its own fastest sets its bar.
  std::vector<TimedRun> runs = {{0, 1.00, {0.4, 0.6}},  {1, 2.00, {0.9, 1.1}},
                                {0, 1.50, {0.9, 0.6}},  {1, 2.15, {1.0, 1.15}},
                                {0, 1.05, {0.45, -1}},  {1, 3.00, {2.0, 1.0}}};
  auto t = quiet_times(runs, 2, 2);
  EXPECT_EQ(t[0][0], (std::vector<double>{0.4, 0.45}));
  EXPECT_EQ(t[0][1], (std::vector<double>{0.6}));  // a task without kernels in a run: no time
  EXPECT_EQ(t[1][0], (std::vector<double>{0.9, 1.0}));
  EXPECT_EQ(t[1][1], (std::vector<double>{1.1, 1.15}));
}

}  // namespace tuner::cli
