#include <gmock/gmock.h>

#include "op_cases.h"
#include "ops/transform.h"
#include "support/error.h"

namespace tuner::ops::testing {

std::vector<OpCase> transform_cases() {
  return {
      {"transpose", {"shape=3x5", "perm=1,0"}},
      {"transpose", {"shape=2x1x4x3", "perm=0,3,1,2"}},
      {"transpose", {"shape=7", "perm=0"}},
      {"transpose", {"shape=2x3x4", "perm=2,0,1", "dtype=int32"}},
      {"reshape", {"shape=4x6", "to=3,8"}},
      {"reshape", {"shape=2x3x5", "to=-1,5,1"}},
      {"reshape", {"shape=1x7x1", "to=7"}},
      {"reshape", {"shape=12", "to=2,-1,3", "dtype=int8"}},
      {"concat", {"shapes=2x3,2x5", "axis=1"}},
      {"concat", {"shapes=1x4,3x4,2x4", "axis=0"}},
      {"concat", {"shapes=2x1x3,2x2x3", "axis=-2", "dtype=int64"}},
      {"concat", {"shapes=5", "axis=0"}},
      {"pad", {"shape=3x4", "pads=1,0,2,3"}},
      {"pad", {"shape=2x1x5", "pads=0,1,0,0,2,1", "value=-1.5"}},
      {"pad", {"shape=6", "pads=0,0"}},
      {"pad", {"shape=3x3", "pads=2,2,2,2", "dtype=int32", "value=7"}},
      {"slice", {"shape=10x6", "starts=1,0", "ends=8,6", "steps=2"}},
      {"slice", {"shape=5x7", "starts=-1", "ends=-100", "axes=1", "steps=-2"}},
      {"slice", {"shape=4x1x9", "starts=2,-5", "ends=100,-1", "axes=0,2"}},
      {"slice", {"shape=6", "starts=5", "ends=0", "steps=-1", "dtype=int32"}},
      {"gather", {"shape=5x4", "indices=3", "axis=0"}},
      {"gather", {"shape=3x6x2", "indices=2x2", "axis=1"}},
      {"gather", {"shape=4x3", "indices=scalar", "axis=-1"}},
      {"gather", {"shape=7", "indices=1x9", "index_dtype=int32"}},
  };
}

class TransformOps : public ::testing::TestWithParam<OpCase> {};
TEST_P(TransformOps, MatchesReference) { expect_matches_reference(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Cases, TransformOps, ::testing::ValuesIn(transform_cases()), CaseName());

namespace {
te::Tensor f32(Shape s, const std::string& name = "x") {
  return te::placeholder(std::move(s), te::DataType::f32(), name);
}
}  // namespace

TEST(Transform, Shapes) {
  te::Tensor x = f32({2, 3, 4});
  EXPECT_EQ(transpose(x, {2, 0, 1})->shape, (Shape{4, 2, 3}));
  EXPECT_EQ(reshape(x, {4, -1})->shape, (Shape{4, 6}));
  EXPECT_EQ(concat({x, f32({2, 5, 4}, "y")}, 1)->shape, (Shape{2, 8, 4}));
  EXPECT_EQ(pad(x, {0, 1, 2, 0, 0, 1})->shape, (Shape{2, 4, 7}));
  EXPECT_EQ(pad(x, {0, 1, 2, 0, 0, 1})->tag, "pad");
  EXPECT_EQ(slice(x, {0, 3}, {2, 0}, {0, 2}, {1, -1})->shape, (Shape{2, 3, 3}));
  te::Tensor idx = te::placeholder({5}, te::DataType::i64(), "idx");
  EXPECT_EQ(gather(x, idx, 1)->shape, (Shape{2, 5, 4}));
  EXPECT_EQ(gather(x, te::placeholder({}, te::DataType::i64(), "i0"), 2)->shape, (Shape{2, 3}));
}

TEST(Transform, BadArgumentsAreUserErrors) {
  using ::testing::HasSubstr;
  te::Tensor x = f32({2, 3, 4});
  try {
    reshape(x, {5, 5});
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("reshape"));
    EXPECT_THAT(e.what(), HasSubstr("2x3x4"));
  }
  EXPECT_THROW(transpose(x, {0, 1}), UserError);
  EXPECT_THROW(transpose(x, {0, 1, 1}), UserError);
  EXPECT_THROW(reshape(x, {-1, -1}), UserError);
  EXPECT_THROW(concat({x, f32({3, 3, 4}, "y")}, 1), UserError);
  EXPECT_THROW(concat({x, te::placeholder({2, 3, 4}, te::DataType::i32(), "y")}, 0), UserError);
  EXPECT_THROW(concat({x}, 3), UserError);
  EXPECT_THROW(pad(x, {1, 1}), UserError);
  EXPECT_THROW(pad(x, {0, -1, 0, 0, 0, 0}), UserError);
  EXPECT_THROW(slice(x, {2}, {1}), UserError);  // empty
  EXPECT_THROW(slice(x, {0}, {1}, {0}, {0}), UserError);
  EXPECT_THROW(gather(x, f32({2}, "fidx"), 0), UserError);
  EXPECT_THROW(gather(x, te::placeholder({2}, te::DataType::i64(), "i"), 3), UserError);
}

}  // namespace tuner::ops::testing
