#include <gtest/gtest.h>

#include "ops/registry.h"
#include "schedule/analysis.h"

using namespace tuner;

namespace {

// Whether the conv of op `name` with these params splits its rows among threads.
bool rows_split(const std::string& name, const std::vector<std::string>& params) {
  auto& def = ops::find_op(name);
  auto dag = def.build(ops::parse_params(def, params));
  for (auto& op : dag.ops())
    if (op->tag == "conv2d") return schedule::split_rows_among_threads(*op);
  ADD_FAILURE() << "no conv2d stage in " << name;
  return false;
}

}  // namespace

// MobileNet-V2 / ResNet-18 layers: activation-heavy convs split rows, weight-heavy ones
// (deep, small maps) and depthwise ones split channels.
TEST(Analysis, RowsAreSplitAmongThreadsWhereActivationsOutweighWeights) {
  EXPECT_TRUE(rows_split("conv2d", {"c=96", "h=56", "w=56", "k=24", "kh=1", "kw=1"}));
  EXPECT_TRUE(rows_split("conv2d", {"c=64", "h=56", "w=56", "k=64", "pad=1"}));
  EXPECT_TRUE(rows_split("conv2d", {"c=16", "h=56", "w=56", "k=96", "kh=1", "kw=1", "wblock=16"}));
  EXPECT_FALSE(rows_split("conv2d", {"c=128", "h=28", "w=28", "k=128", "pad=1"}));  // 784 < 1152
  EXPECT_FALSE(rows_split("conv2d", {"c=96", "h=14", "w=14", "k=576", "kh=1", "kw=1"}));
  EXPECT_FALSE(rows_split("depthwise_conv2d", {"c=144", "h=56", "w=56", "pad=1"}));
  EXPECT_FALSE(rows_split("conv2d", {"c=8", "h=56", "w=56", "k=8", "groups=2", "pad=1"}));
}
