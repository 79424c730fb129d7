#include <gmock/gmock.h>

#include <algorithm>
#include <cmath>
#include <tuple>

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

namespace {

HostTensor run1(const te::Tensor& in, const te::Tensor& out, const HostTensor& data) {
  return evaluate_dag(te::ComputeDAG({in}, {out}), {data})[0];
}

std::vector<double> values(const HostTensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.num_elements(); ++i) v.push_back(t.get(i));
  return v;
}

HostTensor arange(Shape s) {
  HostTensor t(s, te::DataType::f32());
  for (int64_t i = 0; i < t.num_elements(); ++i) t.set(i, double(i + 1));
  return t;
}

ResizeAttrs resize_attrs(ResizeAttrs::Mode m, ResizeAttrs::Coord c, std::vector<double> scales) {
  ResizeAttrs a;
  a.mode = m;
  a.coord = c;
  a.scales = std::move(scales);
  return a;
}

}  // namespace

TEST(Transform, ExpandBroadcastsBothWays) {
  te::Tensor x = f32({3, 1}, "x");
  te::Tensor y = expand(x, {2, 1, 4});
  EXPECT_EQ(y->shape, (Shape{2, 3, 4}));
  HostTensor r = run1(x, y, arange({3, 1}));
  EXPECT_EQ(r.get(0), 1);
  EXPECT_EQ(r.get(5), 2);   // [0, 1, 1]
  EXPECT_EQ(r.get(23), 3);  // [1, 2, 3]
  EXPECT_EQ(expand(x, {1})->shape, (Shape{3, 1}));  // a smaller shape keeps x's
  EXPECT_THROW(expand(x, {2, 2}), UserError);
  EXPECT_THROW(expand(x, {0, 1}), UserError);
}

TEST(Transform, TileRepeatsEachDimension) {
  te::Tensor x = f32({2, 2}, "x");
  te::Tensor y = tile(x, {2, 3});
  EXPECT_EQ(y->shape, (Shape{4, 6}));
  HostTensor r = run1(x, y, arange({2, 2}));
  EXPECT_EQ(values(r), (std::vector<double>{1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4,
                                            1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4}));
  EXPECT_THROW(tile(x, {2}), UserError);
  EXPECT_THROW(tile(x, {1, 0}), UserError);
}

TEST(Transform, ResizeNearestRounding) {
  using M = ResizeAttrs::Mode;
  using C = ResizeAttrs::Coord;
  te::Tensor x = f32({2}, "x");
  HostTensor d = arange({2});
  // Asymmetric x / 2 -> 0, 0.5, 1, 1.5: the rounding mode decides the halves.
  ResizeAttrs a = resize_attrs(M::Nearest, C::Asymmetric, {2.0});
  EXPECT_EQ(values(run1(x, resize(x, {4}, a), d)), (std::vector<double>{1, 1, 2, 2}));
  a.nearest = ResizeAttrs::Round::PreferCeil;
  EXPECT_EQ(values(run1(x, resize(x, {4}, a), d)), (std::vector<double>{1, 2, 2, 2}));
  a.nearest = ResizeAttrs::Round::Ceil;
  EXPECT_EQ(values(run1(x, resize(x, {4}, a), d)), (std::vector<double>{1, 2, 2, 2}));
  // Half pixel, downsampling 4 -> 2: (x + 0.5) * 2 - 0.5 = 0.5, 2.5 -> floor preferred.
  te::Tensor x4 = f32({4}, "x");
  ResizeAttrs h = resize_attrs(M::Nearest, C::HalfPixel, {0.5});
  EXPECT_EQ(values(run1(x4, resize(x4, {2}, h), arange({4}))), (std::vector<double>{1, 3}));
}

TEST(Transform, ResizeLinearCoordinateModes) {
  using M = ResizeAttrs::Mode;
  using C = ResizeAttrs::Coord;
  te::Tensor x = f32({2}, "x");
  HostTensor d = arange({2});
  // Half pixel: -0.25 (clamped), 0.25, 0.75, 1.25 (clamped).
  ResizeAttrs hp = resize_attrs(M::Linear, C::HalfPixel, {2.0});
  EXPECT_EQ(values(run1(x, resize(x, {4}, hp), d)), (std::vector<double>{1, 1.25, 1.75, 2}));
  te::Tensor x3 = f32({3}, "x");
  ResizeAttrs ac = resize_attrs(M::Linear, C::AlignCorners, {5.0 / 3});
  EXPECT_EQ(values(run1(x3, resize(x3, {5}, ac), arange({3}))),
            (std::vector<double>{1, 1.5, 2, 2.5, 3}));
  ResizeAttrs as = resize_attrs(M::Linear, C::Asymmetric, {2.0});
  EXPECT_EQ(values(run1(x, resize(x, {4}, as), d)), (std::vector<double>{1, 1.5, 2, 2}));
  // A one-element output: pytorch_half_pixel reads 0, the first element.
  te::Tensor x4 = f32({4}, "x");
  ResizeAttrs pt = resize_attrs(M::Linear, C::PytorchHalfPixel, {0.25});
  EXPECT_EQ(values(run1(x4, resize(x4, {1}, pt), arange({4}))), (std::vector<double>{1}));
  // One output element at pytorch_half_pixel reads 0 exactly (not -0.5: in cubic mode the
  // taps around -0.5 weigh the first two elements).
  te::Tensor x3b = f32({3}, "x");
  ResizeAttrs pt2 = resize_attrs(M::Cubic, C::PytorchHalfPixel, {1.0 / 3});
  EXPECT_EQ(values(run1(x3b, resize(x3b, {1}, pt2), arange({3}))), (std::vector<double>{1}));
  // Crop [0.25, 0.75] of 5 elements to 3 points: 1, 2, 3 (+1), and 7 outside a [0, 1.5] roi.
  te::Tensor x5 = f32({5}, "x");
  ResizeAttrs tf = resize_attrs(M::Linear, C::TfCropAndResize, {0.6});
  tf.roi = {0.25, 0.75};
  EXPECT_EQ(values(run1(x5, resize(x5, {3}, tf), arange({5}))), (std::vector<double>{2, 3, 4}));
  tf.roi = {0.0, 1.5};
  tf.extrapolation_value = 7;
  EXPECT_EQ(values(run1(x5, resize(x5, {3}, tf), arange({5}))), (std::vector<double>{1, 4, 7}));
}

// Bilinear resizing equals linear resizing along H, then along W.
TEST(Transform, ResizeBilinearIsSeparable) {
  using M = ResizeAttrs::Mode;
  using C = ResizeAttrs::Coord;
  Rng rng(3);
  HostTensor d = HostTensor::random({1, 2, 3, 4}, te::DataType::f32(), rng);
  te::Tensor x = f32({1, 2, 3, 4}, "x");
  ResizeAttrs both = resize_attrs(M::Linear, C::HalfPixel, {1, 1, 7.0 / 3, 0.5});
  HostTensor want = run1(x, resize(x, {1, 2, 7, 2}, both), d);
  ResizeAttrs h = resize_attrs(M::Linear, C::HalfPixel, {1, 1, 7.0 / 3, 1});
  ResizeAttrs w = resize_attrs(M::Linear, C::HalfPixel, {1, 1, 1, 0.5});
  te::Tensor y = resize(resize(x, {1, 2, 7, 4}, h, "rh"), {1, 2, 7, 2}, w, "rw");
  CompareResult r = compare(run1(x, y, d), want, 1e-5, 1e-6);
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_THROW(resize(x, {1, 2, 7}, both), UserError);
  EXPECT_THROW(resize(te::placeholder({4}, te::DataType::i32(), "i"), {8},
                      resize_attrs(M::Linear, C::HalfPixel, {2.0})),
               UserError);
}

// Linear and cubic resizes of several axes run one pass per axis, in the order of least work
// (tag resize_pass, computed once), and the values are the bilinear blend of 4 taps.
TEST(Transform, ResizeRunsOnePassPerAxis) {
  using M = ResizeAttrs::Mode;
  using C = ResizeAttrs::Coord;
  Rng rng(5);
  HostTensor d = HostTensor::random({1, 1, 3, 4}, te::DataType::f32(), rng);
  te::Tensor x = f32({1, 1, 3, 4}, "x");
  te::Tensor y = resize(x, {1, 1, 7, 2}, resize_attrs(M::Linear, C::HalfPixel, {1, 1, 7.0 / 3, 0.5}), "r");
  std::vector<te::Tensor> in = y->inputs();
  ASSERT_EQ(in.size(), 1u);
  EXPECT_EQ(in[0]->tag, "resize_pass");
  EXPECT_EQ(in[0]->shape, (std::vector<int64_t>{1, 1, 3, 2}));  // W shrunk first
  // The innermost pass reads its taps' indices and weights from tables over its output.
  int tables = 0;
  for (const te::Tensor& t : in[0]->inputs()) tables += t->shape == std::vector<int64_t>{2} && t->tag == "resize_pass";
  EXPECT_EQ(tables, 4);
  EXPECT_EQ(y->tag, "injective");
  // The blend of the four taps around each half-pixel coordinate, in doubles.
  std::vector<double> src = values(d), got = values(run1(x, y, d));
  ASSERT_EQ(got.size(), 14u);
  auto taps = [](int64_t o, double scale, int64_t n) {
    double c = std::clamp((double(o) + 0.5) / scale - 0.5, 0.0, double(n - 1));
    int64_t i0 = int64_t(std::floor(c));
    return std::tuple{i0, std::min(i0 + 1, n - 1), c - double(i0)};
  };
  for (int64_t oh = 0; oh < 7; ++oh)
    for (int64_t ow = 0; ow < 2; ++ow) {
      auto [h0, h1, th] = taps(oh, 7.0 / 3, 3);
      auto [w0, w1, tw] = taps(ow, 0.5, 4);
      auto at = [&](int64_t h, int64_t w) { return src[size_t(h * 4 + w)]; };
      double want = (1 - th) * ((1 - tw) * at(h0, w0) + tw * at(h0, w1)) +
                    th * ((1 - tw) * at(h1, w0) + tw * at(h1, w1));
      EXPECT_NEAR(got[size_t(oh * 2 + ow)], want, 1e-5) << oh << " " << ow;
    }
  // A downsample gathers last, on the smaller image: H first.
  te::Tensor x8 = f32({1, 1, 8, 8}, "x8");
  te::Tensor down = resize(x8, {1, 1, 4, 4}, resize_attrs(M::Linear, C::HalfPixel, {1, 1, 0.5, 0.5}), "d");
  EXPECT_EQ(down->inputs()[0]->shape, (std::vector<int64_t>{1, 1, 4, 8}));
  // Nearest reads one element: one pass.
  te::Tensor n = resize(x, {1, 1, 6, 8}, resize_attrs(M::Nearest, C::Asymmetric, {1, 1, 2, 2}), "n");
  EXPECT_EQ(n->inputs()[0]->name, "x");
}

// Antialiased linear downsampling by 2 stretches the triangle to 4 taps around each
// half-pixel coordinate 2o + 0.5: weights 1, 3, 3, 1 (over 8) at 2o - 1 ... 2o + 2, the edge
// value outside; with exclude_outside the outside tap weighs 0 and the rest 3, 3, 1 (over 7).
// Upsampling is unchanged by it; two downsampled axes run as one pass each.
TEST(Transform, ResizeAntialiasStretchesTheKernel) {
  using M = ResizeAttrs::Mode;
  using C = ResizeAttrs::Coord;
  Rng rng(8);
  HostTensor d = HostTensor::random({8}, te::DataType::f32(), rng);
  std::vector<double> src = values(d);
  te::Tensor x = f32({8}, "x");
  ResizeAttrs a = resize_attrs(M::Linear, C::HalfPixel, {0.5});
  a.antialias = true;
  auto at = [&](int64_t i) { return src[size_t(std::clamp<int64_t>(i, 0, 7))]; };
  std::vector<double> got = values(run1(x, resize(x, {4}, a, "aa"), d));
  for (int64_t o = 0; o < 4; ++o) {
    double want = (at(2 * o - 1) + 3 * at(2 * o) + 3 * at(2 * o + 1) + at(2 * o + 2)) / 8;
    EXPECT_NEAR(got[size_t(o)], want, 1e-6) << o;
  }
  a.exclude_outside = true;
  got = values(run1(x, resize(x, {4}, a, "ex"), d));
  EXPECT_NEAR(got[0], (3 * src[0] + 3 * src[1] + src[2]) / 7, 1e-6);
  EXPECT_NEAR(got[3], (src[5] + 3 * src[6] + 3 * src[7]) / 7, 1e-6);
  ResizeAttrs up = resize_attrs(M::Linear, C::HalfPixel, {2.0}), up_aa = up;
  up_aa.antialias = true;
  EXPECT_EQ(values(run1(x, resize(x, {16}, up_aa, "u"), d)), values(run1(x, resize(x, {16}, up, "u"), d)));
  // Two axes: H's pass, then W's from tables of 4 taps.
  HostTensor d2 = HostTensor::random({1, 1, 8, 8}, te::DataType::f32(), rng);
  std::vector<double> src2 = values(d2);
  te::Tensor x2 = f32({1, 1, 8, 8}, "x2");
  ResizeAttrs a2 = resize_attrs(M::Linear, C::HalfPixel, {1, 1, 0.5, 0.5});
  a2.antialias = true;
  te::Tensor y2 = resize(x2, {1, 1, 4, 4}, a2, "aa2");
  ASSERT_EQ(y2->inputs()[0]->tag, "resize_pass");
  got = values(run1(x2, y2, d2));
  const double w[4] = {1.0 / 8, 3.0 / 8, 3.0 / 8, 1.0 / 8};
  for (int64_t oh = 0; oh < 4; ++oh)
    for (int64_t ow = 0; ow < 4; ++ow) {
      double want = 0;
      for (int64_t i = 0; i < 4; ++i)
        for (int64_t j = 0; j < 4; ++j)
          want += w[i] * w[j] *
                  src2[size_t(std::clamp<int64_t>(2 * oh - 1 + i, 0, 7) * 8 + std::clamp<int64_t>(2 * ow - 1 + j, 0, 7))];
      EXPECT_NEAR(got[size_t(oh * 4 + ow)], want, 1e-5) << oh << " " << ow;
    }
}

// A 16x antialiased downsample reads 32 taps per output: a sum over tables (the unrolled form
// took minutes to compile at 224 taps). Against the stretched triangle in doubles.
TEST(Transform, ResizeAntialiasWithManyTapsSumsOverTables) {
  Rng rng(11);
  HostTensor d = HostTensor::random({64}, te::DataType::f32(), rng);
  std::vector<double> src = values(d);
  te::Tensor x = f32({64}, "x");
  ResizeAttrs a = resize_attrs(ResizeAttrs::Mode::Linear, ResizeAttrs::Coord::HalfPixel, {1.0 / 16});
  a.antialias = true;
  te::Tensor y = resize(x, {4}, a, "aa");
  EXPECT_FALSE(y->reduce_axes.empty());
  std::vector<double> got = values(run1(x, y, d));
  for (int64_t o = 0; o < 4; ++o) {
    double c = (double(o) + 0.5) * 16 - 0.5, sum = 0, acc = 0;
    for (int64_t i = int64_t(std::floor(c)) - 16; i <= int64_t(std::floor(c)) + 16; ++i) {
      double w = std::max(0.0, 1 - std::abs(double(i) - c) / 16);
      sum += w;
      acc += w * src[size_t(std::clamp<int64_t>(i, 0, 63))];
    }
    EXPECT_NEAR(got[size_t(o)], acc / sum, 1e-5) << o;
  }
}

}  // namespace tuner::ops::testing
