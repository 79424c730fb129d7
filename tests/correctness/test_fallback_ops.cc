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

INSTANTIATE_TEST_SUITE_P(AllOps, FallbackOps, ::testing::ValuesIn(all_op_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
