// Hand-computed checks of the references themselves (they are the ground truth the other
// tests compare with, so they are checked against known values, e.g. PyTorch's).
#include <gtest/gtest.h>

#include <cmath>

#include "ops/reference.h"

namespace tuner::ops::testing {

namespace {

using te::DataType;

// A float32 host tensor holding `v`.
HostTensor hf32(Shape s, std::vector<double> v) {
  return HostTensor::from_values(std::move(s), DataType::f32(), v);
}

void expect_values(const HostTensor& t, const Shape& shape, const std::vector<double>& want,
                   double tol = 1e-6) {
  ASSERT_EQ(t.shape, shape);
  ASSERT_EQ(t.num_elements(), int64_t(want.size()));
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(t.get(int64_t(i)), want[i], tol) << "at " << i;
}

HostTensor arange(Shape s, double start = 0) {
  HostTensor t(std::move(s), DataType::f32());
  for (int64_t i = 0; i < t.num_elements(); ++i) t.set(i, start + double(i));
  return t;
}

HostTensor ones(Shape s) {
  HostTensor t(std::move(s), DataType::f32());
  for (int64_t i = 0; i < t.num_elements(); ++i) t.set(i, 1);
  return t;
}

}  // namespace

TEST(Reference, Matmul) {
  HostTensor a = hf32({2, 2}, {1, 2, 3, 4}), b = hf32({2, 2}, {5, 6, 7, 8});
  expect_values(ref::matmul(a, b), {2, 2}, {19, 22, 43, 50});
  expect_values(ref::matmul(a, hf32({2, 2}, {5, 7, 6, 8}), true), {2, 2}, {19, 22, 43, 50});
  // Batch broadcast: A [2, 1, 2] x B [2, 1] -> [2, 1, 1].
  expect_values(ref::matmul(hf32({2, 1, 2}, {1, 2, 3, 4}), hf32({2, 1}, {10, 1})), {2, 1, 1},
                {12, 34});
  expect_values(ref::dense(a, hf32({1, 2}, {1, 1}), hf32({1}, {100})), {2, 1}, {103, 107});
}

TEST(Reference, Conv2d) {
  HostTensor x = arange({1, 1, 3, 3}, 1), w = hf32({1, 1, 2, 2}, {1, 0, 0, 1});
  expect_values(ref::conv2d(x, w, Conv2dAttrs{}), {1, 1, 2, 2}, {6, 8, 12, 14});
  Conv2dAttrs a;
  a.stride_h = a.stride_w = 2;
  a.pad_top = a.pad_left = a.pad_bottom = a.pad_right = 1;
  expect_values(ref::conv2d(x, w, a), {1, 1, 2, 2}, {1, 3, 7, 14});
  Conv2dAttrs g;
  g.groups = 2;
  expect_values(ref::conv2d(hf32({1, 2, 1, 1}, {2, 3}), hf32({2, 1, 1, 1}, {10, 100}), g),
                {1, 2, 1, 1}, {20, 300});
  Conv2dAttrs d;
  d.dilation_h = d.dilation_w = 2;
  expect_values(ref::conv2d(x, w, d, hf32({1}, {0.5})), {1, 1, 1, 1}, {1 + 9 + 0.5});
}

TEST(Reference, MaxPoolCeilMode) {
  HostTensor x = hf32({1, 1, 1, 5}, {1, 5, 2, 4, 3});
  Pool2dAttrs a;
  a.kernel_w = a.stride_w = 2;
  expect_values(ref::max_pool2d(x, a), {1, 1, 1, 2}, {5, 4});
  a.ceil_mode = true;
  expect_values(ref::max_pool2d(x, a), {1, 1, 1, 3}, {5, 4, 3});
}

TEST(Reference, AvgPoolDivisorsLikePyTorch) {
  // F.avg_pool2d(ones(1,1,3,3), 2, 2, padding=1, count_include_pad=True)
  Pool2dAttrs a;
  a.kernel_h = a.kernel_w = a.stride_h = a.stride_w = 2;
  a.pad_top = a.pad_left = a.pad_bottom = a.pad_right = 1;
  a.count_include_pad = true;
  expect_values(ref::avg_pool2d(ones({1, 1, 3, 3}), a), {1, 1, 2, 2}, {0.25, 0.5, 0.5, 1});
  a.count_include_pad = false;
  expect_values(ref::avg_pool2d(ones({1, 1, 3, 3}), a), {1, 1, 2, 2}, {1, 1, 1, 1});

  // ceil_mode: the last window reaches past the padded input and is clipped to it.
  Pool2dAttrs c;
  c.kernel_h = c.kernel_w = 3;
  c.stride_h = c.stride_w = 2;
  c.pad_top = c.pad_left = c.pad_bottom = c.pad_right = 1;
  c.ceil_mode = true;
  c.count_include_pad = true;
  expect_values(ref::avg_pool2d(ones({1, 1, 4, 4}), c), {1, 1, 3, 3},
                {4 / 9.0, 6 / 9.0, 2 / 6.0, 6 / 9.0, 1, 3 / 6.0, 2 / 6.0, 3 / 6.0, 1 / 4.0});

  // No padding, ceil mode: window (1, 1) covers rows/cols 2..3 of arange(16).
  Pool2dAttrs e;
  e.kernel_h = e.kernel_w = 3;
  e.stride_h = e.stride_w = 2;
  e.ceil_mode = true;
  HostTensor out = ref::avg_pool2d(arange({1, 1, 4, 4}), e);
  ASSERT_EQ(out.shape, (Shape{1, 1, 2, 2}));
  EXPECT_NEAR(out.get(3), (10 + 11 + 14 + 15) / 4.0, 1e-6);
  EXPECT_NEAR(out.get(0), (0 + 1 + 2 + 4 + 5 + 6 + 8 + 9 + 10) / 9.0, 1e-6);
}

TEST(Reference, GlobalPools) {
  HostTensor x = arange({1, 2, 2, 2});
  expect_values(ref::global_avg_pool(x), {1, 2, 1, 1}, {1.5, 5.5});
  expect_values(ref::global_max_pool(x), {1, 2, 1, 1}, {3, 7});
}

TEST(Reference, Unary) {
  HostTensor x = hf32({3}, {-1, 0, 1});
  expect_values(ref::unary(x, ref::UnaryOp::Relu), {3}, {0, 0, 1});
  expect_values(ref::unary(x, ref::UnaryOp::Gelu), {3}, {-0.15865525, 0, 0.84134475});
  expect_values(ref::unary(x, ref::UnaryOp::Hardswish), {3}, {-1 / 3.0, 0, 2 / 3.0});
  expect_values(ref::unary(x, ref::UnaryOp::Hardsigmoid, 0.2, 0.5), {3}, {0.3, 0.5, 0.7});
  expect_values(ref::unary(x, ref::UnaryOp::LeakyRelu, 0.1), {3}, {-0.1, 0, 1});
  expect_values(ref::unary(x, ref::UnaryOp::Silu), {3}, {-0.26894142, 0, 0.73105858});
  expect_values(ref::unary(x, ref::UnaryOp::Clip, -0.5, 0.5), {3}, {-0.5, 0, 0.5});
  HostTensor i = HostTensor::from_values({3}, DataType::i32(), {-3, 0, 4});
  expect_values(ref::unary(i, ref::UnaryOp::Abs), {3}, {3, 0, 4});
  expect_values(ref::unary(i, ref::UnaryOp::Clip, -1, 2), {3}, {-1, 0, 2});
}

TEST(Reference, BinaryBroadcastAndCompare) {
  HostTensor a = hf32({2, 1}, {1, 2}), b = hf32({2}, {10, 20});
  expect_values(ref::binary(a, b, ref::BinaryOp::Add), {2, 2}, {11, 21, 12, 22});
  HostTensor lt = ref::binary(a, hf32({2}, {1.5, 0}), ref::BinaryOp::Less);
  EXPECT_EQ(lt.dtype, DataType::boolean());
  expect_values(lt, {2, 2}, {1, 0, 0, 0});
  HostTensor c = HostTensor::from_values({2}, DataType::boolean(), {1, 0});
  expect_values(ref::where(c, hf32({2, 1}, {1, 2}), hf32({1}, {9})), {2, 2}, {1, 9, 2, 9});
  HostTensor i8 = HostTensor::from_values({1}, DataType::i8(), {100});
  expect_values(ref::binary(i8, i8, ref::BinaryOp::Add), {1}, {-56});  // wraps like int8
}

TEST(Reference, Cast) {
  HostTensor x = hf32({4}, {-2.7, 2.7, 0.5, 0});
  expect_values(ref::cast(x, DataType::i32()), {4}, {-2, 2, 0, 0});
  expect_values(ref::cast(x, DataType::boolean()), {4}, {1, 1, 1, 0});
}

TEST(Reference, Reductions) {
  HostTensor x = hf32({2, 2}, {1, 2, 3, 4});
  expect_values(ref::reduce(x, ReduceOp::Sum, {0}), {2}, {4, 6});
  expect_values(ref::reduce(x, ReduceOp::Mean, {1}, true), {2, 1}, {1.5, 3.5});
  expect_values(ref::reduce(x, ReduceOp::Max, {}), {}, {4});
  expect_values(ref::reduce(x, ReduceOp::Min, {-1}), {2}, {1, 3});
  expect_values(ref::softmax(hf32({3}, {1, 2, 3})), {3}, {0.09003057, 0.24472847, 0.66524096});
  expect_values(ref::log_softmax(hf32({3}, {1, 2, 3})), {3},
                {std::log(0.09003057), std::log(0.24472847), std::log(0.66524096)});
  expect_values(
      ref::layer_norm(hf32({4}, {1, 2, 3, 4}), ones({4}), hf32({4}, {0, 0, 0, 1}), {-1}, 0), {4},
      {-1.3416408, -0.4472136, 0.4472136, 2.3416408});
}

TEST(Reference, Transforms) {
  HostTensor x = arange({2, 3});
  expect_values(ref::transpose(x, {1, 0}), {3, 2}, {0, 3, 1, 4, 2, 5});
  expect_values(ref::reshape(x, {3, -1}), {3, 2}, {0, 1, 2, 3, 4, 5});
  expect_values(ref::concat({x, hf32({2, 1}, {9, 8})}, 1), {2, 4}, {0, 1, 2, 9, 3, 4, 5, 8});
  expect_values(ref::pad(hf32({2}, {1, 2}), {1, 2}, 9), {5}, {9, 1, 2, 9, 9});
  expect_values(ref::slice(arange({6}), {5}, {0}, {}, {-2}), {3}, {5, 3, 1});
  expect_values(ref::slice(x, {-2}, {100}, {1}), {2, 2}, {1, 2, 4, 5});
  HostTensor idx = HostTensor::from_values({3}, DataType::i64(), {-1, 0, 2});
  expect_values(ref::gather(hf32({3}, {10, 20, 30}), idx), {3}, {30, 10, 30});
  expect_values(ref::gather(x, HostTensor::from_values({}, DataType::i64(), {-1}), 1), {2}, {2, 5});
}

}  // namespace tuner::ops::testing
