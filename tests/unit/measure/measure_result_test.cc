#include <gtest/gtest.h>

#include <cmath>

#include "measure/measure_result.h"

namespace tuner::measure {

TEST(MeasureResult, MedianOfOddAndEvenCounts) {
  MeasureResult r;
  r.status = db::MeasureStatus::Ok;
  r.times = {3e-3, 1e-3, 2e-3};
  EXPECT_DOUBLE_EQ(r.median(), 2e-3);
  r.times = {4e-3, 1e-3, 2e-3, 3e-3};
  EXPECT_DOUBLE_EQ(r.median(), 2.5e-3);
  EXPECT_EQ(r.str(), "ok 2.5000 ms");
}

TEST(MeasureResult, ErrorsHaveNoCost) {
  MeasureResult r = make_error(db::MeasureStatus::RunTimeout, "too slow");
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(std::isinf(r.median()));
  EXPECT_EQ(r.str(), "RUN_TIMEOUT: too slow");
}

}  // namespace tuner::measure
