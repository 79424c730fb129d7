#include <gmock/gmock.h>

#include "op_cases.h"
#include "ops/elementwise.h"
#include "ops/shape.h"
#include "support/error.h"

namespace tuner::ops::testing {

std::vector<OpCase> elementwise_cases() {
  std::vector<OpCase> cases;
  // Unary float ops on a non-divisible shape, a size-1-dim shape and a single element.
  for (const char* op : {"relu", "sigmoid", "tanh", "exp", "log", "sqrt", "erf", "gelu", "silu",
                         "hardswish", "neg", "abs", "clip", "hardsigmoid", "leaky_relu"})
    for (const char* shape : {"shape=7x13", "shape=3x1x5", "shape=1"})
      cases.push_back({op, {shape}});
  cases.push_back({"clip", {"shape=4x9", "min=-0.5", "max=0.25"}});
  cases.push_back({"hardsigmoid", {"shape=33", "alpha=0.3", "beta=0.4"}});
  cases.push_back({"leaky_relu", {"shape=2x17", "alpha=0.2"}});
  // Integer-capable unary ops.
  for (const char* op : {"relu", "neg", "abs", "clip"})
    cases.push_back({op, {"shape=5x6", "dtype=int32"}});
  cases.push_back({"relu", {"shape=2x3x4", "dtype=int8"}});

  // Binary ops: same shape, row broadcast, outer product, rank extension.
  for (const char* op :
       {"add", "sub", "mul", "div", "pow", "maximum", "minimum", "equal", "less", "greater"})
    for (auto shapes : std::vector<std::vector<std::string>>{
             {"a=5x7", "b=5x7"}, {"a=4x5", "b=5"}, {"a=3x1", "b=1x4"}, {"a=1", "b=2x3x1"}})
      cases.push_back({op, shapes});
  for (const char* op : {"add", "sub", "mul", "maximum", "minimum", "equal", "less", "greater"})
    cases.push_back({op, {"a=3x4", "b=4", "dtype=int32"}});
  cases.push_back({"add", {"a=6", "b=6", "dtype=int64"}});

  cases.push_back({"where", {"cond=4x5", "a=4x5", "b=4x5"}});
  cases.push_back({"where", {"cond=3x1", "a=1x4", "b=4"}});
  cases.push_back({"where", {"cond=1", "a=2x3", "b=1x3", "dtype=int32"}});
  cases.push_back({"where", {"cond=2x1x3", "a=5x1", "b=1"}});

  cases.push_back({"cast", {"shape=7x3"}});
  cases.push_back({"cast", {"shape=1x5", "from=int32", "to=float32"}});
  cases.push_back({"cast", {"shape=9", "from=float32", "to=int8"}});
  cases.push_back({"cast", {"shape=4x4", "from=float32", "to=uint8"}});
  cases.push_back({"cast", {"shape=6", "from=float32", "to=bool"}});
  cases.push_back({"cast", {"shape=6", "from=bool", "to=float32"}});
  cases.push_back({"cast", {"shape=2x3", "from=int64", "to=int32"}});
  cases.push_back({"cast", {"shape=5", "from=float32", "to=float16"}});
  return cases;
}

class ElementwiseOps : public ::testing::TestWithParam<OpCase> {};
TEST_P(ElementwiseOps, MatchesReference) { expect_matches_reference(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Cases, ElementwiseOps, ::testing::ValuesIn(elementwise_cases()),
                         CaseName());

namespace {
te::Tensor i32(Shape s, const std::string& name = "x") {
  return te::placeholder(std::move(s), te::DataType::i32(), name);
}
}  // namespace

TEST(Elementwise, OutputTypesAndShapes) {
  te::Tensor a = f32({3, 1}, "a"), b = f32({1, 4}, "b");
  EXPECT_EQ(add(a, b)->shape, (Shape{3, 4}));
  EXPECT_EQ(add(a, b)->tag, "injective");
  EXPECT_EQ(less(a, b)->dtype, te::DataType::boolean());
  EXPECT_EQ(cast(a, te::DataType::i8())->dtype, te::DataType::i8());
  EXPECT_EQ(relu(i32({2}))->dtype, te::DataType::i32());
  EXPECT_EQ(add(a, b, "my_add")->name, "my_add");
}

TEST(Elementwise, BadInputsAreUserErrors) {
  using ::testing::HasSubstr;
  try {
    add(f32({2, 3}, "a"), f32({4, 3}, "b"));
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("add"));
    EXPECT_THAT(e.what(), HasSubstr("2x3"));
    EXPECT_THAT(e.what(), HasSubstr("4x3"));
  }
  EXPECT_THROW(mul(f32({3}, "a"), i32({3}, "b")), UserError);
  EXPECT_THROW(exp(i32({3})), UserError);
  te::Tensor b = te::placeholder({3}, te::DataType::boolean(), "b");
  EXPECT_THROW(div(b, b), UserError);
  EXPECT_THROW(gelu(i32({3})), UserError);
  EXPECT_THROW(where(f32({3}, "c"), f32({3}, "a"), f32({3}, "b")), UserError);
  EXPECT_THROW(clip(f32({3}), 2.0, 1.0), UserError);
  EXPECT_THROW(relu(te::placeholder({3}, te::DataType::boolean(), "x")), UserError);
}

// ONNX integer Div truncates toward zero (C semantics), unlike floordiv.
TEST(Elementwise, IntegerDivisionTruncatesTowardZero) {
  for (te::DataType t : {te::DataType::i32(), te::DataType::i8(), te::DataType::i64()}) {
    te::Tensor a = te::placeholder({6}, t, "a"), b = te::placeholder({6}, t, "b");
    te::ComputeDAG dag({a, b}, {div(a, b)});
    HostTensor x = HostTensor::from_values({6}, t, {7, -7, 7, -7, 6, -6});
    HostTensor y = HostTensor::from_values({6}, t, {2, 2, -2, -2, -3, 3});
    HostTensor q = evaluate_dag(dag, {x, y})[0];
    std::vector<int64_t> want = {3, -3, -3, 3, -2, -2};
    for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(q.get_int(i), want[size_t(i)]) << t.str() << " " << i;
  }
  te::Tensor a = te::placeholder({2}, te::DataType::u8(), "a");
  te::ComputeDAG dag({a}, {div(a, a)});
  EXPECT_EQ(evaluate_dag(dag, {HostTensor::from_values({2}, te::DataType::u8(), {200, 3})})[0]
                .get_int(0),
            1);
}

// Integer a / b and a mod b are total (x86 traps on x / 0 and INT_MIN / -1, killing the
// process running the kernel): 0 for b = 0, -a wrapped for a / -1, else C's and ONNX's rules.
TEST(Elementwise, IntegerDivisionAndModuloAreTotal) {
  std::vector<double> vals = {-128, -7, -1, 0, 1, 2, 7, 127};
  std::vector<double> xs, ys;
  for (double x : vals)
    for (double y : vals) xs.push_back(x), ys.push_back(y);
  int64_t n = int64_t(xs.size());
  te::DataType t = te::DataType::i8();
  te::Tensor a = te::placeholder({n}, t, "a"), b = te::placeholder({n}, t, "b");
  auto binary = [&](auto f, const char* name) {
    return te::compute({n}, [&](const std::vector<te::Var>& i) { return f(a(i[0]), b(i[0])); }, name);
  };
  te::ComputeDAG dag({a, b}, {div(a, b), binary([](auto x, auto y) { return integer_mod(x, y, false); }, "mod"),
                              binary([](auto x, auto y) { return integer_mod(x, y, true); }, "fmod")});
  auto out = evaluate_dag(dag, {HostTensor::from_values({n}, t, xs), HostTensor::from_values({n}, t, ys)});
  for (int64_t i = 0; i < n; ++i) {
    auto x = int64_t(xs[size_t(i)]), y = int64_t(ys[size_t(i)]);
    int64_t q = y == 0 ? 0 : y == -1 ? int64_t(int8_t(-x)) : x / y;
    int64_t fmod = y == 0 || y == -1 ? 0 : x % y;
    int64_t mod = fmod != 0 && (fmod < 0) != (y < 0) ? fmod + y : fmod;
    EXPECT_EQ(out[0].get_int(i), q) << x << " / " << y;
    EXPECT_EQ(out[1].get_int(i), mod) << x << " mod " << y;
    EXPECT_EQ(out[2].get_int(i), fmod) << x << " fmod " << y;
  }
}

}  // namespace tuner::ops::testing
