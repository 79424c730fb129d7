// How the in-model validation turns timed runs into per-round kernel times (cli/quiet_runs.h).
#include <gtest/gtest.h>

#include "cli/quiet_runs.h"

namespace tuner::cli {

TEST(QuietRuns, OneMedianPerBuildAndRound) {
  // Build 0: round 0 has three runs (one slowed), round 1 one; build 1: a lucky fast run in
  // round 0 no longer throws out its other rounds.
  std::vector<TimedRun> runs = {{0, 0, {0.4, 0.6}},  {1, 0, {0.5, 1.1}},  {0, 0, {0.9, 0.6}},
                                {0, 0, {0.45, -1}},  {1, 0, {0.9, 1.0}},  {0, 1, {0.5, 0.7}},
                                {1, 1, {1.0, 1.15}}, {1, 1, {1.2, 1.25}}};
  auto t = round_medians(runs, 2, 2);
  EXPECT_EQ(t[0][0], (std::vector<double>{0.45, 0.5}));
  EXPECT_EQ(t[0][1], (std::vector<double>{0.6, 0.7}));  // a run without the task's kernels: no time
  EXPECT_EQ(t[1][0], (std::vector<double>{0.7, 1.1}));
  EXPECT_EQ(t[1][1], (std::vector<double>{1.05, 1.2}));
}

}  // namespace tuner::cli
