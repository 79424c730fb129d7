// A NaN reaching min/max, the pooling maximum, the max/min reductions, Relu or Clip comes out
// as NaN (as in ONNX Runtime's elementwise operators and numpy), in the interpreter and in
// compiled kernels, vectorized or not, whichever operand holds it.
#include <gtest/gtest.h>

#include <cmath>

#include "codegen/default_schedule.h"
#include "kernel_check.h"
#include "op_cases.h"
#include "ops/te_eval.h"
#include "random_schedule.h"
#include "te/float_minmax.h"

namespace tuner::testing {
namespace {

const char* const kOps[] = {"maximum",    "minimum",         "relu",       "clip",
                            "max_pool2d", "global_max_pool", "reduce_max", "reduce_min"};

int64_t count_nan(const ops::HostTensor& t) {
  int64_t n = 0;
  for (int64_t i = 0; i < t.num_elements(); ++i) n += std::isnan(t.get(i));
  return n;
}

TEST(NanPropagation, ScalarHelpersPropagateFromEitherSide) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(std::isnan(te::nan_max(nan, 1.0)));
  EXPECT_TRUE(std::isnan(te::nan_max(1.0, nan)));
  EXPECT_TRUE(std::isnan(te::nan_min(nan, 1.0)));
  EXPECT_TRUE(std::isnan(te::nan_min(1.0, nan)));
  EXPECT_EQ(te::nan_max(-1.0, 2.0), 2.0);
  EXPECT_EQ(te::nan_min(-1.0, 2.0), -1.0);
}

TEST(NanPropagation, CompiledKernelsAndTheInterpreterKeepNaN) {
  for (const char* op : kOps) {
    for (const auto& params : op_cases().at(op)) {
      OpCase c(op, params);
      poison_with_nan(c);
      ASSERT_GT(count_nan(c.expected[0]), 0) << c.str() << ": the reference drops every NaN";
      std::vector<ops::HostTensor> interp = ops::evaluate_dag(c.dag, c.inputs);
      auto r = ops::compare(interp[0], c.expected[0], 1e-5, 1e-6);
      EXPECT_TRUE(r.ok) << c.str() << " (interpreter): " << r.message;
      auto fallback = codegen::default_schedule(c.dag, host_target());
      EXPECT_EQ(check_schedule(c, fallback.state(), 1e-5, 1e-6), "") << c.str() << " (fallback)";
      // Random schedules: split, reordered and vectorized loops put the NaN in either operand
      // of the emitted select, in vector lanes and in scalar remainders.
      for (uint64_t seed = 1; seed <= 4; ++seed) {
        schedule::Schedule s = random_schedule(c.dag, seed, 8);
        EXPECT_EQ(check_schedule(c, s.state(), 1e-5, 1e-6), "")
            << c.str() << " (random schedule " << seed << ")\n"
            << s.state().str();
      }
    }
  }
}

}  // namespace
}  // namespace tuner::testing
