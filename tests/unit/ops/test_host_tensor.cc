#include <gmock/gmock.h>

#include <cmath>
#include <limits>
#include <set>

#include "ops/host_tensor.h"
#include "ops/shape.h"
#include "te/tensor.h"

namespace tuner::ops::testing {

using te::DataType;

TEST(HostTensor, AlignedZeroedContiguous) {
  for (Shape s : {Shape{1}, Shape{3}, Shape{7, 13}, Shape{2, 3, 5}, Shape{}}) {
    for (DataType t : {DataType::f32(), DataType::i8(), DataType::i64(), DataType::boolean()}) {
      HostTensor x(s, t);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(x.raw()) % 64, 0u);
      EXPECT_EQ(x.num_elements(), te::num_elements(s));
      EXPECT_EQ(x.bytes(), size_t(x.num_elements()) * t.bytes());
      for (int64_t i = 0; i < x.num_elements(); ++i) EXPECT_EQ(x.get(i), 0.0);
    }
  }
  HostTensor x({2, 3}, DataType::f32());
  x.data<float>()[4] = 2.5f;
  EXPECT_EQ(x.get(4), 2.5);
  EXPECT_EQ(x.strides(), (std::vector<int64_t>{3, 1}));
}

TEST(HostTensor, CopiesAreDeep) {
  HostTensor a({4}, DataType::f32());
  a.set(1, 3.0);
  HostTensor b = a;
  b.set(1, 5.0);
  EXPECT_EQ(a.get(1), 3.0);
  EXPECT_EQ(b.get(1), 5.0);
  EXPECT_NE(a.raw(), b.raw());
  HostTensor c = std::move(b);
  EXPECT_EQ(c.get(1), 5.0);
  HostTensor empty;
  HostTensor copy = empty;
  EXPECT_FALSE(copy.defined());
}

TEST(HostTensor, TypedAccessChecksTheType) {
  HostTensor x({2}, DataType::i32());
  EXPECT_NO_THROW(x.data<int32_t>());
  EXPECT_THROW(x.data<float>(), InternalError);
  EXPECT_THROW(HostTensor({2}, DataType(DataType::Handle, 64)), UserError);
  EXPECT_THROW(HostTensor({2, -1}, DataType::f32()), UserError);
}

TEST(HostTensor, EmptyShapesHoldNoElements) {
  HostTensor e({2, 0}, DataType::i64());
  EXPECT_EQ(e.num_elements(), 0);
  EXPECT_TRUE(e.defined());
  HostTensor copy = e;
  EXPECT_EQ(copy.shape, (std::vector<int64_t>{2, 0}));
  EXPECT_TRUE(compare(copy, e).ok);
}

TEST(HostTensor, IntegerStoresWrapToTheWidth) {
  HostTensor i8({2}, DataType::i8());
  i8.set_int(0, 200);
  i8.set(1, -2.9);  // truncates toward zero
  EXPECT_EQ(i8.get_int(0), -56);
  EXPECT_EQ(i8.get_int(1), -2);
  HostTensor u8({1}, DataType::u8());
  u8.set_int(0, -1);
  EXPECT_EQ(u8.get_int(0), 255);
  HostTensor b({1}, DataType::boolean());
  b.set(0, 0.25);
  EXPECT_EQ(b.get_int(0), 1);
}

TEST(HostTensor, RandomIsInRangeAndSeeded) {
  Rng r1(5), r2(5);
  HostTensor a = HostTensor::random({1000}, DataType::f32(), r1, -2, 3);
  HostTensor b = HostTensor::random({1000}, DataType::f32(), r2, -2, 3);
  EXPECT_TRUE(compare(a, b, 0, 0).ok);
  double lo = 1e9, hi = -1e9;
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    lo = std::min(lo, a.get(i));
    hi = std::max(hi, a.get(i));
  }
  EXPECT_GE(lo, -2);
  EXPECT_LE(hi, 3);
  EXPECT_LT(lo, -1.9);
  EXPECT_GT(hi, 2.9);
  HostTensor n = HostTensor::random({500}, DataType::i32(), r1, -3, 3);
  std::set<int64_t> seen;
  for (int64_t i = 0; i < n.num_elements(); ++i) seen.insert(n.get_int(i));
  EXPECT_EQ(seen, (std::set<int64_t>{-3, -2, -1, 0, 1, 2, 3}));
}

TEST(HostTensor, HalfConversion) {
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half(1e6f), 0x7c00);                   // overflow -> inf
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_half(1e-9f), 0x0000);
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie -> even
  EXPECT_EQ(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(std::nanf("")))));
  for (uint16_t h :
       {0x0000, 0x0001, 0x03ff, 0x0400, 0x3c00, 0x3555, 0x7bff, 0xfbff, 0x7c00, 0x8001})
    EXPECT_EQ(float_to_half(half_to_float(h)), h) << h;
  HostTensor t({1}, DataType::f16());
  t.set(0, 0.1);
  EXPECT_NEAR(t.get(0), 0.1, 1e-4);
  EXPECT_NO_THROW(t.data<uint16_t>());
}

TEST(HostTensor, Compare) {
  HostTensor a = HostTensor::from_values({2, 2}, DataType::f32(), {1, 2, 3, 4});
  HostTensor b = a;
  EXPECT_TRUE(compare(a, b).ok);
  b.set(3, 4.001);
  CompareResult r = compare(a, b, 1e-4, 1e-5);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_THAT(r.message, ::testing::HasSubstr("[1,1]"));
  EXPECT_TRUE(compare(a, b, 1e-3, 0).ok);
  HostTensor n = a, m = a;
  n.set(0, std::nan(""));
  m.set(0, std::nan(""));
  EXPECT_TRUE(compare(n, m).ok);
  EXPECT_EQ(compare(n, m).max_abs_error, 0);
  // A NaN against a number is no small error: the summary must not say "max abs error 0".
  EXPECT_FALSE(compare(n, a).ok);
  EXPECT_TRUE(std::isinf(compare(n, a).max_abs_error));
  EXPECT_TRUE(std::isinf(compare(a, n).max_abs_error));
  EXPECT_FALSE(compare(a, HostTensor({4}, DataType::f32())).ok);
  HostTensor i = HostTensor::from_values({1}, DataType::i64(), {1});
  HostTensor j = HostTensor::from_values({1}, DataType::i64(), {2});
  EXPECT_FALSE(compare(i, j, 1, 1).ok);  // integers compare exactly
  // Above 2^53 too, and the message shows the integers (as doubles both read 2^53).
  i.set_int(0, (int64_t(1) << 53) + 1);
  j.set_int(0, int64_t(1) << 53);
  CompareResult big = compare(i, j);
  EXPECT_FALSE(big.ok);
  EXPECT_EQ(big.max_abs_error, 1);
  EXPECT_THAT(big.message, ::testing::HasSubstr("got 9007199254740993, expected 9007199254740992"));
  // A NaN is written "nan" whatever its sign bit (fmt wrote "-nan").
  n.set(0, -std::nan(""));
  EXPECT_THAT(compare(n, a).message, ::testing::HasSubstr("got nan, expected 1"));
}

TEST(HostTensor, HalfComparesAtHalfPrecision) {
  // Three ulps apart at 2.8 (a k=64 half dot product is typically that far off): equal as
  // half; a tenth off is still a wrong answer.
  HostTensor a = HostTensor::from_values({2}, DataType::f16(), {-2.826171875, 1.0});
  HostTensor b = HostTensor::from_values({2}, DataType::f16(), {-2.83203125, 1.0});
  EXPECT_TRUE(compare(b, a, 1e-3, 2e-3).ok);
  b.set(1, 1.1);
  EXPECT_FALSE(compare(b, a, 1e-3, 2e-3).ok);
}

TEST(HostTensor, AllCloseLeavesNaNAndInfinityToCompare) {
  float a[3] = {1, 2, 3}, b[3] = {1, 2, 3.0005f};
  double err = -1;
  EXPECT_TRUE(all_close(a, b, 3, 1e-3, 0, &err));
  EXPECT_NEAR(err, 0.0005, 1e-6);
  EXPECT_FALSE(all_close(a, b, 3, 1e-5, 0));
  float inf = std::numeric_limits<float>::infinity();
  float x[2] = {inf, std::nanf("")}, y[2] = {inf, std::nanf("")};
  EXPECT_FALSE(all_close(x, y, 2, 1, 1));  // compare() decides: equal infinities, NaN = NaN
  HostTensor tx = HostTensor::from_values({2}, DataType::f32(), {x[0], x[1]});
  HostTensor ty = tx;
  EXPECT_TRUE(compare(tx, ty).ok);
}

TEST(HostTensor, ForEachIndexIsRowMajor) {
  std::vector<std::vector<int64_t>> seen;
  for_each_index({2, 3}, [&](const std::vector<int64_t>& i) { seen.push_back(i); });
  ASSERT_EQ(seen.size(), 6u);
  EXPECT_EQ(seen[1], (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(seen[3], (std::vector<int64_t>{1, 0}));
  int calls = 0;
  for_each_index({}, [&](const std::vector<int64_t>&) { ++calls; });
  EXPECT_EQ(calls, 1);
}

}  // namespace tuner::ops::testing
