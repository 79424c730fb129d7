#include <gmock/gmock.h>

#include "ops/shape.h"
#include "support/error.h"

namespace tuner::ops::testing {

TEST(Shape, Broadcast) {
  EXPECT_EQ(broadcast_shapes({{3, 1}, {1, 4}}, "op"), (Shape{3, 4}));
  EXPECT_EQ(broadcast_shapes({{5}, {2, 3, 1}}, "op"), (Shape{2, 3, 5}));
  EXPECT_EQ(broadcast_shapes({{}, {2}}, "op"), (Shape{2}));
  EXPECT_EQ(broadcast_shapes({{1}, {1}}, "op"), (Shape{1}));
  try {
    broadcast_shapes({{2, 3}, {3, 3}}, "add");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "add: shapes 2x3 and 3x3 are not broadcastable");
  }
}

TEST(Shape, Axes) {
  EXPECT_EQ(normalize_axis(-1, 3, "op"), 2);
  EXPECT_THROW(normalize_axis(3, 3, "op"), UserError);
  EXPECT_EQ(normalize_axes({-1, 0}, 3, "op"), (std::vector<int>{0, 2}));
  EXPECT_EQ(normalize_axes({}, 2, "op"), (std::vector<int>{0, 1}));
  EXPECT_THROW(normalize_axes({1, -2}, 3, "op"), UserError);
  EXPECT_EQ(trailing_axes({-2, -1}, 3, "op"), (std::vector<int>{1, 2}));
  EXPECT_THROW(trailing_axes({0}, 3, "op"), UserError);
  EXPECT_THROW(trailing_axes({0, 2}, 3, "op"), UserError);
  EXPECT_EQ(reduce_shape({2, 3, 4}, {1}, false), (Shape{2, 4}));
  EXPECT_EQ(reduce_shape({2, 3, 4}, {0, 2}, true), (Shape{1, 3, 1}));
}

TEST(Shape, MatmulAndConv) {
  EXPECT_EQ(matmul_shape({2, 1, 3, 4}, {5, 4, 6}, false, "mm"), (Shape{2, 5, 3, 6}));
  EXPECT_EQ(matmul_shape({3, 4}, {6, 4}, true, "mm"), (Shape{3, 6}));
  EXPECT_THROW(matmul_shape({3, 4}, {6, 4}, false, "mm"), UserError);
  Conv2dAttrs a;
  a.stride_h = a.stride_w = 2;
  a.pad_top = a.pad_left = a.pad_bottom = a.pad_right = 3;
  EXPECT_EQ(conv2d_shape({1, 3, 224, 224}, {64, 3, 7, 7}, a, "conv"), (Shape{1, 64, 112, 112}));
  Conv2dAttrs d;
  d.dilation_h = 2;
  EXPECT_EQ(conv2d_shape({1, 1, 7, 7}, {1, 1, 3, 3}, d, "conv"), (Shape{1, 1, 3, 5}));
}

TEST(Shape, PoolOutputSizes) {
  Pool2dAttrs a;
  a.kernel_h = a.kernel_w = 3;
  a.stride_h = a.stride_w = 2;
  a.pad_top = a.pad_left = a.pad_bottom = a.pad_right = 1;
  EXPECT_EQ(pool2d_shape({1, 64, 112, 112}, a, "pool"), (Shape{1, 64, 56, 56}));
  a.ceil_mode = true;
  EXPECT_EQ(pool2d_shape({1, 1, 8, 8}, a, "pool"), (Shape{1, 1, 5, 5}));  // ceil(7/2)+1 = 5
  // ceil mode never starts a window in the trailing padding: 5 + 2 -> ceil(5/2)+1 = 4 -> 3.
  Pool2dAttrs b;
  b.kernel_h = b.kernel_w = b.stride_h = b.stride_w = 2;
  b.pad_top = b.pad_left = b.pad_bottom = b.pad_right = 1;
  b.ceil_mode = true;
  EXPECT_EQ(pool2d_shape({1, 1, 5, 5}, b, "pool"), (Shape{1, 1, 3, 3}));
}

TEST(Shape, Transforms) {
  EXPECT_EQ(reshape_shape({2, 3, 4}, {-1, 4}, "r"), (Shape{6, 4}));
  EXPECT_THROW(reshape_shape({2, 3, 4}, {-1, 5}, "r"), UserError);
  EXPECT_THROW(reshape_shape({2, 3}, {0, 6}, "r"), UserError);
  EXPECT_EQ(concat_shape({{2, 3}, {2, 4}}, 1, "c"), (Shape{2, 7}));
  EXPECT_EQ(pad_shape({2, 3}, {1, 0, 2, 1}, "p"), (Shape{5, 4}));
  EXPECT_EQ(gather_shape({4, 5, 6}, {2, 3}, 1), (Shape{4, 2, 3, 6}));
  EXPECT_EQ(transpose_shape({2, 3, 4}, {1, 2, 0}, "t"), (Shape{3, 4, 2}));
}

TEST(Shape, SliceResolution) {
  auto dims = resolve_slice({10, 7}, {-3}, {1000}, {}, {}, "s");
  EXPECT_EQ(dims[0].start, 7);
  EXPECT_EQ(dims[0].extent, 3);
  EXPECT_EQ(dims[1].extent, 7);  // untouched axis
  dims = resolve_slice({10}, {100}, {-100}, {0}, {-3}, "s");
  EXPECT_EQ(dims[0].start, 9);
  EXPECT_EQ(dims[0].step, -3);
  EXPECT_EQ(dims[0].extent, 4);  // 9, 6, 3, 0
  EXPECT_THROW(resolve_slice({10}, {5}, {5}, {}, {}, "s"), UserError);
  EXPECT_THROW(resolve_slice({10}, {0}, {5}, {}, {0}, "s"), UserError);
  EXPECT_THROW(resolve_slice({10}, {0, 0}, {5}, {}, {}, "s"), UserError);
}

}  // namespace tuner::ops::testing
