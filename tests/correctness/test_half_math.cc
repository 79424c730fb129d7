// float16 element-wise math (tanh, erf, GELU, ...) computes in float32 and rounds once: libm
// has no half functions, and a half passed to tanhf or the float32 vector code came back as
// garbage (tanh -0.99 -> -2.5, GELU -0.016 -> 150).
#include <gtest/gtest.h>

#include "codegen/default_schedule.h"
#include "kernel_check.h"
#include "random_schedule.h"

namespace tuner::testing {
namespace {

TEST(HalfMath, UnaryFunctionsMatchTheirReference) {
  for (const char* op : {"tanh", "erf", "gelu", "sigmoid", "exp", "silu", "log", "sqrt"}) {
    for (const char* shape : {"shape=7x13x1", "shape=67"}) {
      OpCase c(op, {shape, "dtype=float16"});
      auto fallback = codegen::default_schedule(c.dag, host_target());
      EXPECT_EQ(check_schedule(c, fallback.state(), 1e-2, 1e-2), "") << c.str() << " (fallback)";
      schedule::Schedule s = random_schedule(c.dag, 7, 6);
      EXPECT_EQ(check_schedule(c, s.state(), 1e-2, 1e-2), "") << c.str() << " (random)\n"
                                                               << s.state().str();
    }
  }
}

}  // namespace
}  // namespace tuner::testing
