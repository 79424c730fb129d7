#include <gmock/gmock.h>

#include "ops/shape.h"
#include "ops/te_eval.h"

namespace tuner::ops::testing {

using te::DataType;
using te::Expr;
using te::Var;

namespace {
HostTensor values(Shape s, DataType t, std::vector<double> v) {
  return HostTensor::from_values(std::move(s), t, v);
}
}  // namespace

TEST(TeEval, ElementwiseAndReduction) {
  te::Tensor a = te::placeholder({2, 3}, DataType::f32(), "a");
  te::Tensor b = te::compute(
      {2, 3}, [&](const std::vector<Var>& i) { return a(i[0], i[1]) * 2.0 + 1; }, "b");
  te::Tensor s = te::compute(
      {2},
      [&](const std::vector<Var>& i) {
        te::IterVar k = te::reduce_axis(3, "k");
        return te::sum(b(i[0], k.var), {k});
      },
      "s");
  te::ComputeDAG dag({a}, {s, b});
  auto out = evaluate_dag(dag, {values({2, 3}, DataType::f32(), {0, 1, 2, 3, 4, 5})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape, (Shape{2}));
  EXPECT_EQ(out[0].get(0), 1 + 3 + 5);
  EXPECT_EQ(out[0].get(1), 7 + 9 + 11);
  EXPECT_EQ(out[1].get(5), 11);
  auto all = evaluate_all_ops(dag, {values({2, 3}, DataType::f32(), {0, 1, 2, 3, 4, 5})});
  EXPECT_EQ(all.size(), dag.ops().size());
}

TEST(TeEval, IfThenElseIsLazySelectIsNot) {
  te::Tensor a = te::placeholder({4}, DataType::f32(), "a");
  auto shifted = [&](bool lazy) {
    return te::compute(
        {4},
        [&](const std::vector<Var>& i) {
          Expr cond = Expr(i[0]) >= Expr(1);
          Expr read = a(Expr(i[0]) - Expr(1));
          return lazy ? te::if_then_else(cond, read, Expr(0.0)) : te::select(cond, read, Expr(0.0));
        },
        "shift");
  };
  HostTensor in = values({4}, DataType::f32(), {1, 2, 3, 4});
  HostTensor out = evaluate_dag(te::ComputeDAG({a}, {shifted(true)}), {in})[0];
  EXPECT_EQ(out.get(0), 0);
  EXPECT_EQ(out.get(3), 3);
  try {
    evaluate_dag(te::ComputeDAG({a}, {shifted(false)}), {in});
    FAIL() << "an out-of-bounds read was not reported";
  } catch (const InternalError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("out-of-bounds read of a"));
  }
}

TEST(TeEval, IntegerSemantics) {
  te::Tensor a = te::placeholder({5}, DataType::i8(), "a");
  // int8 arithmetic wraps; floordiv/floormod round toward -inf.
  te::Tensor sum = te::compute(
      {5}, [&](const std::vector<Var>& i) { return a(i[0]) + a(i[0]); }, "sum");
  te::Tensor div = te::compute(
      {5},
      [&](const std::vector<Var>& i) {
        return te::floordiv(Expr(i[0]) - Expr(3), Expr(2)) * Expr(10) +
               te::floormod(Expr(i[0]) - Expr(3), Expr(2));
      },
      "div");
  te::ComputeDAG dag({a}, {sum, div});
  auto out = evaluate_dag(dag, {values({5}, DataType::i8(), {100, -100, 1, 2, 3})});
  EXPECT_EQ(out[0].get_int(0), -56);
  EXPECT_EQ(out[0].get_int(1), 56);
  EXPECT_EQ(out[1].dtype, DataType::i64());
  EXPECT_EQ(out[1].get_int(0), -2 * 10 + 1);  // -3 = 2 * -2 + 1
  EXPECT_EQ(out[1].get_int(2), -1 * 10 + 1);
  EXPECT_EQ(out[1].get_int(4), 0 * 10 + 1);
}

TEST(TeEval, ReduceKindsAndCasts) {
  te::Tensor a = te::placeholder({4}, DataType::f32(), "a");
  auto red = [&](te::ReduceKind k, const std::string& name) {
    return te::compute(
        {},
        [&](const std::vector<Var>&) {
          te::IterVar r = te::reduce_axis(4, "r");
          return te::reduce(k, a(r.var), {r});
        },
        name);
  };
  te::Tensor c = te::compute(
      {4}, [&](const std::vector<Var>& i) { return te::cast(DataType::i32(), a(i[0])); }, "c");
  te::ComputeDAG dag({a}, {red(te::ReduceKind::Prod, "p"), red(te::ReduceKind::Max, "mx"),
                           red(te::ReduceKind::Min, "mn"), c});
  auto out = evaluate_dag(dag, {values({4}, DataType::f32(), {1.5, -2, 4, 0.5})});
  EXPECT_EQ(out[0].get(0), 1.5 * -2 * 4 * 0.5);
  EXPECT_EQ(out[1].get(0), 4);
  EXPECT_EQ(out[2].get(0), -2);
  EXPECT_EQ(out[3].get_int(0), 1);
  EXPECT_EQ(out[3].get_int(1), -2);
}

TEST(TeEval, Float16RoundsEveryOperation) {
  te::Tensor a = te::placeholder({1}, DataType::f16(), "a");
  te::Tensor b = te::compute(
      {1}, [&](const std::vector<Var>& i) { return a(i[0]) + 1e-4; }, "b");
  auto out = evaluate_dag(te::ComputeDAG({a}, {b}), {values({1}, DataType::f16(), {1.0})});
  EXPECT_EQ(out[0].get(0), 1.0);  // 1 + 1e-4 is 1 in half precision
}

TEST(TeEval, InputsAreChecked) {
  te::Tensor a = te::placeholder({2}, DataType::f32(), "a");
  te::Tensor b = te::compute(
      {2}, [&](const std::vector<Var>& i) { return a(i[0]); }, "b");
  te::ComputeDAG dag({a}, {b});
  EXPECT_THROW(evaluate_dag(dag, {}), UserError);
  EXPECT_THROW(evaluate_dag(dag, {HostTensor({3}, DataType::f32())}), UserError);
  EXPECT_THROW(evaluate_dag(dag, {HostTensor({2}, DataType::i32())}), UserError);
}

}  // namespace tuner::ops::testing
