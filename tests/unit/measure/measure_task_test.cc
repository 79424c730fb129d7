#include <gtest/gtest.h>

#include "measure/measure_task.h"
#include "unit/measure/measure_test_util.h"

namespace tuner::measure {

TEST(MeasureTask, KeyDependsOnWorkloadTargetSeedAndInputs) {
  MeasureTask a = test::task_of(test::add_dag(), 1);
  EXPECT_EQ(a.key(), test::task_of(test::add_dag(), 1).key());  // structural, not by pointer
  EXPECT_NE(a.key(), test::task_of(test::add_dag(), 2).key());
  EXPECT_NE(a.key(), test::task_of(test::matmul_dag(8, 8, 8), 1).key());
  MeasureTask cross = a;
  cross.target = codegen::Target::parse("llvm -mtriple=aarch64-linux-gnu");
  EXPECT_NE(a.key(), cross.key());
  MeasureTask given = a;
  given.inputs = ops::random_inputs(a.dag, 5);
  MeasureTask other = a;
  other.inputs = ops::random_inputs(a.dag, 6);
  EXPECT_NE(given.key(), a.key());
  EXPECT_NE(given.key(), other.key());
  MeasureTask reseeded = given;  // explicit inputs: the seed is not used
  reseeded.input_seed = 99;
  EXPECT_EQ(reseeded.key(), given.key());
  MeasureTask expected = given;
  expected.expected = {ops::random_inputs(a.dag, 7)[0]};
  EXPECT_NE(expected.key(), given.key());
}

}  // namespace tuner::measure
