#include <gtest/gtest.h>

#include <algorithm>

#include "ops/registry.h"
#include "schedule/analysis.h"
#include "schedule/fallback.h"

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

// The fallback's vector over a conv's output width: a power of two dividing it, unless that
// is below half a vector and a larger divisor fills more than half (28 wide: 14 lanes, not 4).
TEST(Fallback, ConvRowsFillTheVector) {
  auto vector_width = [](int64_t width) {
    auto& def = ops::find_op("conv2d");
    std::string w = "w=" + std::to_string(width);
    auto dag = def.build(ops::parse_params(def, {"c=4", "h=4", w, "k=8", "kh=1", "kw=1"}));
    schedule::FallbackOptions fo;
    fo.vector_lanes = 16;
    auto s = schedule::fallback_schedule(dag, fo);
    int64_t lanes = 0;
    for (auto& st : s.state().stages())
      for (int id : st.leaves)
        if (st.iters[size_t(id)].ann == schedule::Annotation::Vectorize)
          lanes = std::max(lanes, st.iters[size_t(id)].extent);
    return lanes;
  };
  EXPECT_EQ(vector_width(28), 14);
  EXPECT_EQ(vector_width(14), 14);
  EXPECT_EQ(vector_width(64), 32);
  EXPECT_EQ(vector_width(56), 8);
  EXPECT_EQ(vector_width(24), 8);
  EXPECT_EQ(vector_width(12), 12);
  EXPECT_EQ(vector_width(7), 7);
}
