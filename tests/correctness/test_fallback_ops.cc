// Every operator of the library, under its fallback schedule, matches its naive reference
// (fp32 rtol 1e-4 / atol 1e-5; integer and bool results exactly) on at least three shape sets:
// non-divisible sizes, size-1 dimensions and broadcasting where it applies.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "codegen/default_schedule.h"
#include "kernel_check.h"
#include "op_cases.h"

using namespace tuner;
using namespace tuner::testing;

namespace {

class FallbackOps : public ::testing::TestWithParam<std::string> {};

TEST_P(FallbackOps, MatchesReference) {
  const std::string& op = GetParam();
  auto it = op_cases().find(op);
  ASSERT_NE(it, op_cases().end()) << "no shape sets for op " << op << ": add them to tests/correctness/op_cases.cc";
  ASSERT_GE(it->second.size(), 3u);
  auto target = host_target();
  for (auto& params : it->second) {
    OpCase c(op, params);
    auto sched = codegen::default_schedule(c.dag, target);
    EXPECT_EQ(check_schedule(c, sched.state(), 1e-4, 1e-5), "") << c.str() << "\n" << sched.state().str();
  }
}

// A reduction of a whole long vector sums partial results (schedule::split_full_reduction):
// one running float32 sum of 1M elements was ~3e-2 off a sum of ~1e3, and one core.
TEST(FallbackReductions, AWholeVectorIsSummedInPartialsToFloat32Accuracy) {
  auto target = host_target();
  for (const char* op : {"reduce_sum", "reduce_mean"}) {
    OpCase c(op, {"shape=1048576", "axes=0"});
    auto sched = codegen::default_schedule(c.dag, target);
    std::string state = sched.state().str();
    EXPECT_NE(state.find(".rf"), std::string::npos) << state;
    EXPECT_EQ(check_schedule(c, sched.state(), 1e-6, 1e-7), "") << c.str() << "\n" << state;
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, FallbackOps, ::testing::ValuesIn(all_op_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
