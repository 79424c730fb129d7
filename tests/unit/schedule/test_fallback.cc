#include <gtest/gtest.h>

#include <algorithm>

#include "ops/registry.h"
#include "schedule/fallback.h"

using namespace tuner;

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
