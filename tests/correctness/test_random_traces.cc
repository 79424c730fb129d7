// Property: any valid schedule computes the reference result. 200 random traces per
// workload; invalid primitive applications must be rejected with ScheduleError (never a
// crash or a wrong answer). Also checks trace JSON round-trip and replay determinism.
#include <gtest/gtest.h>

#include "kernel_check.h"
#include "random_schedule.h"

#include <cstdio>
#include <set>

using namespace tuner;
using namespace tuner::testing;

namespace {

constexpr int kTraces = 200;

void check_random_traces(const OpCase& c, uint64_t seed0) {
  codegen::CompileOptions opts;
  opts.build.opt_level = 1;  // compile time dominates; correctness does not depend on it
  RandomScheduleStats stats;
  int distinct_states = 0;
  std::set<std::string> seen;
  for (int t = 0; t < kTraces; ++t) {
    auto s = random_schedule(c.dag, seed0 + t, 12, &stats);
    // Round trip and replay.
    auto j = s.trace().to_json();
    auto back = schedule::Trace::from_json(Json::parse(j.dump()));
    ASSERT_EQ(back, s.trace());
    auto replayed = schedule::Schedule::replay(c.dag, back);
    ASSERT_EQ(replayed.state().str(), s.state().str()) << s.trace().pretty();
    distinct_states += seen.insert(s.state().str()).second;
    std::string err = check_schedule(c, s.state(), 1e-4, 1e-4, opts);
    ASSERT_EQ(err, "") << c.str() << " trace #" << t << ":\n"
                       << s.trace().pretty() << s.state().str();
  }
  EXPECT_GT(stats.rejected, 0) << "no invalid application was tried";
  EXPECT_GT(stats.applied, kTraces * 3);
  EXPECT_GT(distinct_states, kTraces / 2);
  std::printf("%s: %d traces, %d primitives applied, %d rejected with ScheduleError, %d distinct\n",
              c.str().c_str(), kTraces, stats.applied, stats.rejected, distinct_states);
}

}  // namespace

TEST(RandomTraces, Matmul67x129x95) {
  check_random_traces(OpCase("matmul", {"m=67", "n=129", "k=95"}), 1000);
}

TEST(RandomTraces, Conv2dStride2Pad1) {
  check_random_traces(OpCase("conv2d", {"n=1", "c=32", "h=28", "w=28", "k=64", "kh=3", "kw=3",
                                        "stride=2", "pad=1"}),
                      2000);
}

TEST(RandomTraces, Conv2dPackedWeight) {
  check_random_traces(OpCase("conv2d", {"n=1", "c=8", "h=10", "w=10", "k=32", "kh=3", "kw=3",
                                        "pad=1", "wblock=16"}),
                      2500);
}

TEST(RandomTraces, SoftmaxThenLayerNorm) {
  check_random_traces(OpCase("softmax_layer_norm", {"shape=8x67"}), 3000);
}
