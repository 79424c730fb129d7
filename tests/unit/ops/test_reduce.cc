#include <gmock/gmock.h>

#include "op_cases.h"
#include "ops/reduce.h"
#include "ops/reference.h"
#include "support/error.h"

namespace tuner::ops::testing {

std::vector<OpCase> reduce_cases() {
  std::vector<OpCase> cases;
  for (const char* op : {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min"}) {
    cases.push_back({op, {"shape=5x7"}});
    cases.push_back({op, {"shape=3x1x4", "axes=0,2", "keepdims=1"}});
    cases.push_back({op, {"shape=2x3x5", "axes=all"}});
    cases.push_back({op, {"shape=4x6x3", "axes=-2"}});
    cases.push_back({op, {"shape=1", "axes=0", "keepdims=1"}});
  }
  cases.push_back({"reduce_sum", {"shape=4x9", "axes=1", "dtype=int32"}});
  cases.push_back({"reduce_max", {"shape=3x5", "axes=0", "dtype=int64"}});
  for (const char* op : {"softmax", "log_softmax"}) {
    cases.push_back({op, {"shape=4x33"}});
    cases.push_back({op, {"shape=3x5x2", "axis=1"}});
    cases.push_back({op, {"shape=2x1x3", "axis=1"}});
    cases.push_back({op, {"shape=7", "axis=0"}});
  }
  cases.push_back({"layer_norm", {"shape=6x31"}});
  cases.push_back({"layer_norm", {"shape=2x3x5", "axes=-2,-1"}});
  cases.push_back({"layer_norm", {"shape=1x1x8", "epsilon=1e-3"}});
  cases.push_back({"layer_norm", {"shape=3x4", "axes=0,1"}});
  cases.push_back({"softmax_layer_norm", {"shape=4x17"}});
  cases.push_back({"softmax_layer_norm", {"shape=2x3x8"}});
  cases.push_back({"softmax_layer_norm", {"shape=1x5", "epsilon=1e-3"}});
  cases.push_back({"softmax", {"shape=8x129"}});
  cases.push_back({"layer_norm", {"shape=4x7x65"}});
  cases.push_back({"softmax_layer_norm", {"shape=16x96"}});
  return cases;
}

class ReduceOps : public ::testing::TestWithParam<OpCase> {};
TEST_P(ReduceOps, MatchesReference) { expect_matches_reference(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Cases, ReduceOps, ::testing::ValuesIn(reduce_cases()), CaseName());

TEST(Reduce, ShapesTagsAndStages) {
  te::Tensor x = f32({2, 3, 4});
  EXPECT_EQ(reduce_sum(x, {1})->shape, (Shape{2, 4}));
  EXPECT_EQ(reduce_sum(x, {1}, true)->shape, (Shape{2, 1, 4}));
  EXPECT_EQ(reduce_max(x, {})->shape, Shape{});  // all axes, no keepdims: a scalar
  EXPECT_EQ(reduce_min(x, {-1})->tag, "reduce");
  te::Tensor mean = reduce_mean(x, {0, 2});
  EXPECT_EQ(mean->tag, "injective");
  EXPECT_EQ(mean->inputs()[0]->name, "reduce_mean_sum");
  EXPECT_EQ(mean->inputs()[0]->tag, "reduce");

  // softmax: max, exp, sum, divide; every op uniquely named.
  te::ComputeDAG sm({x}, {softmax(x, 1)});
  std::vector<std::string> names;
  for (auto& t : sm.ops()) names.push_back(t->name);
  EXPECT_THAT(names,
              ::testing::ElementsAre("x", "softmax_max", "softmax_exp", "softmax_sum", "softmax"));
  te::Tensor g = f32({4}, "gamma"), b = f32({4}, "beta");
  te::ComputeDAG ln({x, g, b}, {layer_norm(x, g, b)});
  EXPECT_EQ(ln.ops().size(), 6u);  // x, gamma, beta, mean, var, out
  // Several composite ops in one DAG only need distinct names.
  te::Tensor s2 = softmax(softmax(x, -1, "sm1"), -1, "sm2");
  EXPECT_NO_THROW(te::ComputeDAG({x}, {s2}));
}

TEST(Reduce, SoftmaxRowsSumToOne) {
  const OpDef& op = find_op("softmax");
  Params p = parse_params(op, {"shape=3x10"});
  te::ComputeDAG dag = op.build(p);
  HostTensor y = evaluate_dag(dag, op.make_inputs(p, dag, 3))[0];
  for (int r = 0; r < 3; ++r) {
    double s = 0;
    for (int c = 0; c < 10; ++c) s += y.get(r * 10 + c);
    EXPECT_NEAR(s, 1.0, 1e-5);
  }
}

TEST(Reduce, BadAxesAreUserErrors) {
  using ::testing::HasSubstr;
  te::Tensor x = f32({2, 3, 4});
  try {
    reduce_sum(x, {3});
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("reduce_sum"));
    EXPECT_THAT(e.what(), HasSubstr("axis 3"));
  }
  EXPECT_THROW(reduce_sum(x, {1, -2}), UserError);  // same axis twice
  EXPECT_THROW(softmax(x, -4), UserError);
  EXPECT_THROW(softmax(te::placeholder({3}, te::DataType::i32(), "i"), 0), UserError);
  EXPECT_THROW(reduce_mean(te::placeholder({3}, te::DataType::i32(), "i"), {0}), UserError);
  te::Tensor g = f32({4}, "gamma"), b = f32({4}, "beta");
  EXPECT_THROW(layer_norm(x, g, b, {1}), UserError);  // not trailing
  EXPECT_THROW(layer_norm(x, f32({3}, "gamma"), b, {-1}), UserError);
  EXPECT_THROW(layer_norm(x, f32({3, 4}, "g2"), f32({3, 4}, "b2"), {0, 2}), UserError);
}

}  // namespace tuner::ops::testing
