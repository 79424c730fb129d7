// Compile-time weight layouts: packing is a pure permutation of the weight, and the reference
// conv over a packed weight equals the one over the original.
#include <gtest/gtest.h>

#include <cstring>

#include "ops/layout.h"
#include "ops/reference.h"
#include "ops/shape.h"
#include "support/error.h"
#include "support/rng.h"

namespace tuner::ops {

TEST(Layout, PackPlacesEachWeightAtItsBlockAndLane) {
  Rng rng(1);
  HostTensor w = HostTensor::random({32, 3, 2, 2}, te::DataType::f32(), rng);
  HostTensor p = pack_conv_weight(w, 16);
  ASSERT_EQ(p.shape, (Shape{2, 3, 2, 2, 16}));
  // w[k, c, r, s] == p[k / 16, c, r, s, k % 16]
  for (int64_t k = 0; k < 32; ++k)
    for (int64_t i = 0; i < 12; ++i)
      ASSERT_EQ(p.get(((k / 16) * 12 + i) * 16 + k % 16), w.get(k * 12 + i)) << k << "," << i;
  HostTensor back = unpack_conv_weight(p);
  EXPECT_EQ(back.shape, w.shape);
  EXPECT_EQ(std::memcmp(back.raw(), w.raw(), w.bytes()), 0);
}

TEST(Layout, MatmulPackPlacesEachColumnInItsPanel) {
  Rng rng(5);
  HostTensor b = HostTensor::random({3, 32}, te::DataType::f32(), rng);
  HostTensor p = pack_matmul_weight(b, 16);
  ASSERT_EQ(p.shape, (Shape{2, 3, 16}));
  // b[k, j] == p[j / 16, k, j % 16]
  for (int64_t k = 0; k < 3; ++k)
    for (int64_t j = 0; j < 32; ++j) ASSERT_EQ(p.get(((j / 16) * 3 + k) * 16 + j % 16), b.get(k * 32 + j)) << k << "," << j;
  HostTensor back = unpack_matmul_weight(p);
  EXPECT_EQ(back.shape, b.shape);
  EXPECT_EQ(std::memcmp(back.raw(), b.raw(), b.bytes()), 0);
}

TEST(Layout, ReferenceConvAcceptsAPackedWeight) {
  Rng rng(2);
  HostTensor x = HostTensor::random({1, 4, 6, 6}, te::DataType::f32(), rng);
  HostTensor w = HostTensor::random({16, 4, 3, 3}, te::DataType::f32(), rng);
  Conv2dAttrs a;
  a.pad_top = a.pad_left = a.pad_bottom = a.pad_right = 1;
  HostTensor want = ref::conv2d(x, w, a, HostTensor());
  HostTensor got = ref::conv2d(x, pack_conv_weight(w, 8), a, HostTensor());
  EXPECT_EQ(std::memcmp(got.raw(), want.raw(), want.bytes()), 0);
  EXPECT_EQ(conv2d_shape(x.shape, pack_conv_weight(w, 8).shape, a, "conv"), want.shape);
}

// Grouped: a block within one group's output channels is a packed layout of the same conv;
// one that straddles two groups is refused.
TEST(Layout, PackedBlocksLieWithinAGroup) {
  Rng rng(4);
  HostTensor x = HostTensor::random({1, 4, 5, 5}, te::DataType::f32(), rng);
  HostTensor w = HostTensor::random({32, 2, 3, 3}, te::DataType::f32(), rng);
  Conv2dAttrs a;
  a.groups = 2;
  HostTensor want = ref::conv2d(x, w, a, HostTensor());
  HostTensor got = ref::conv2d(x, pack_conv_weight(w, 8), a, HostTensor());
  EXPECT_EQ(std::memcmp(got.raw(), want.raw(), want.bytes()), 0);
  EXPECT_EQ(conv2d_shape(x.shape, {2, 2, 3, 3, 16}, a, "conv"), want.shape);
  a.groups = 4;  // 8 output channels per group
  EXPECT_THROW(conv2d_shape({1, 8, 6, 6}, {2, 2, 3, 3, 16}, a, "conv"), UserError);
}

}  // namespace tuner::ops
