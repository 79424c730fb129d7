#include <gmock/gmock.h>

#include <array>

#include "op_cases.h"
#include "ops/nn.h"
#include "ops/reference.h"
#include "ops/winograd.h"
#include "support/rng.h"
#include "support/error.h"

namespace tuner::ops::testing {

std::vector<OpCase> nn_cases() {
  return {
      {"matmul", {"m=7", "n=5", "k=3"}},
      {"matmul", {"m=1", "n=9", "k=4", "transpose_b=1"}},
      {"matmul", {"m=3", "n=4", "k=6", "batch=2x1", "batch_b=3"}},
      {"matmul", {"m=5", "n=1", "k=1", "batch=4", "batch_b=none"}},
      {"matmul", {"m=4", "n=3", "k=5", "dtype=int32"}},
      {"matmul", {"m=2", "n=3", "k=4", "batch=1x3", "batch_b=2x1", "transpose_b=1"}},
      {"dense", {"m=3", "n=5", "k=7"}},
      {"dense", {"m=1", "n=4", "k=3", "bias=0"}},
      {"dense", {"m=6", "n=1", "k=2"}},
      {"conv2d", {"c=3", "h=7", "w=6", "k=4"}},
      {"conv2d", {"n=2", "c=4", "h=9", "w=9", "k=6", "stride=2", "pad=1", "groups=2"}},
      {"conv2d", {"c=2", "h=8", "w=7", "k=3", "kw=2", "pad=0,1,2,1", "dilation=2", "bias=1"}},
      {"conv2d", {"c=5", "h=5", "w=5", "k=2", "kh=1", "kw=1", "stride=2"}},
      {"conv2d", {"c=1", "h=1", "w=1", "k=3", "kh=1", "kw=1"}},
      {"conv2d", {"c=4", "h=6", "w=6", "k=4", "groups=4", "pad=1", "dtype=int32"}},
      {"conv2d", {"c=3", "h=6", "w=7", "k=2", "stride=1,2", "dilation=2,1", "pad=2,1"}},
      {"depthwise_conv2d", {"c=3", "h=6", "w=7", "pad=1"}},
      {"depthwise_conv2d", {"c=2", "h=9", "w=8", "stride=2", "multiplier=2", "pad=1,0"}},
      {"depthwise_conv2d", {"n=2", "c=1", "h=5", "w=5", "kh=5", "kw=5", "bias=1"}},
      {"depthwise_conv2d", {"c=4", "h=7", "w=7", "dilation=2", "pad=2"}},
      {"max_pool2d", {"c=2", "h=7", "w=7"}},
      {"max_pool2d", {"c=3", "h=8", "w=7", "kernel=3", "stride=2", "pad=1", "ceil_mode=1"}},
      {"max_pool2d", {"n=2", "c=1", "h=5", "w=6", "kernel=3,2", "stride=1,2", "pad=1,0,0,1"}},
      {"max_pool2d", {"c=2", "h=1", "w=1", "kernel=1", "stride=1"}},
      {"max_pool2d", {"c=2", "h=6", "w=6", "kernel=3", "stride=2", "pad=1", "dtype=int32"}},
      {"avg_pool2d", {"c=2", "h=7", "w=7"}},
      {"avg_pool2d", {"c=3", "h=8", "w=7", "kernel=3", "stride=2", "pad=1", "ceil_mode=1"}},
      {"avg_pool2d",
       {"c=3", "h=8", "w=7", "kernel=3", "stride=2", "pad=1", "ceil_mode=1",
        "count_include_pad=1"}},
      {"avg_pool2d",
       {"c=2", "h=6", "w=5", "kernel=3", "stride=2", "ceil_mode=1", "count_include_pad=1"}},
      {"avg_pool2d", {"c=1", "h=5", "w=5", "kernel=2,3", "stride=1", "pad=1,1,0,2"}},
      {"global_avg_pool", {"c=3", "h=5", "w=4"}},
      {"global_avg_pool", {"n=2", "c=1", "h=1", "w=1"}},
      {"global_avg_pool", {"c=4", "h=7", "w=3"}},
      {"global_max_pool", {"c=3", "h=5", "w=4"}},
      {"global_max_pool", {"n=2", "c=1", "h=1", "w=1"}},
      {"global_max_pool", {"c=4", "h=7", "w=3", "dtype=int32"}},
      // A few larger, realistic shapes.
      {"matmul", {"m=33", "n=47", "k=65"}},
      {"conv2d", {"c=8", "h=15", "w=13", "k=12", "pad=1", "bias=1"}},
      {"depthwise_conv2d", {"c=16", "h=14", "w=14", "stride=2", "pad=1"}},
      {"max_pool2d", {"c=16", "h=17", "w=17", "kernel=3", "stride=2", "pad=1"}},
      {"avg_pool2d",
       {"c=8", "h=14", "w=14", "kernel=3", "stride=2", "pad=1", "ceil_mode=1",
        "count_include_pad=1"}},
      // Winograd's transforms (te against the reference stages; the math itself is checked
      // against the direct conv by Winograd.ReferenceStagesEqualTheDirectConv).
      {"winograd_input", {"n=2", "c=2", "h=6", "w=7", "pad=0"}},
      {"winograd_input", {"c=3", "h=9", "w=11"}},
      {"winograd_input", {"c=1", "h=70", "w=5", "pad=1,0,2,1"}},
      {"winograd_output", {"c=2", "h=8", "w=5", "k=3", "pad=1,0,2,1", "bias=1"}},
      {"winograd_output", {"n=2", "c=2", "h=9", "w=9", "k=4"}},
      {"winograd_output", {"c=2", "h=70", "w=70", "k=2", "pad=0"}},
      // The three in one kernel (its fallback keeps a block of tiles' V and M local).
      {"winograd_conv", {"c=2", "h=8", "w=5", "k=3", "pad=1,0,2,1", "bias=1"}},
      {"winograd_conv", {"n=2", "c=3", "h=9", "w=9", "k=4"}},
      {"winograd_conv", {"c=2", "h=70", "w=70", "k=16", "pad=0"}},
  };
}

class NnOps : public ::testing::TestWithParam<OpCase> {};
TEST_P(NnOps, MatchesReference) { expect_matches_reference(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Cases, NnOps, ::testing::ValuesIn(nn_cases()), CaseName());

namespace {

// The op of the DAG's ops named `name`, or nullptr.
const te::OperationNode* find(const te::ComputeDAG& dag, const std::string& name) {
  for (auto& t : dag.ops())
    if (t->name == name) return t.get();
  return nullptr;
}

}  // namespace

TEST(Nn, ConvPaddingIsASeparatePadOp) {
  Conv2dAttrs a;
  a.pad_top = a.pad_bottom = 1;
  te::Tensor data = f32({1, 2, 5, 5}, "data"), w = f32({3, 2, 3, 3}, "w");
  te::ComputeDAG dag({data, w}, {conv2d(data, w, a)});
  const te::OperationNode* pad = find(dag, "conv2d_pad");
  ASSERT_NE(pad, nullptr);
  EXPECT_EQ(pad->tag, "pad");
  EXPECT_EQ(pad->shape, (Shape{1, 2, 7, 5}));
  const te::OperationNode* conv = find(dag, "conv2d");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->tag, "conv2d");
  EXPECT_EQ(conv->attrs.at("pad_top"), 1);
  EXPECT_EQ(conv->attrs.at("groups"), 1);
  EXPECT_EQ(conv->attrs.at("kernel_h"), 3);
  EXPECT_EQ(conv->shape, (Shape{1, 3, 5, 3}));

  te::ComputeDAG unpadded({data, w}, {conv2d(data, w, Conv2dAttrs{})});
  EXPECT_EQ(unpadded.ops().size(), 3u);  // data, w, conv2d: no pad op
}

TEST(Nn, TagsAndAttrs) {
  te::Tensor a = f32({4, 8}, "a"), b = f32({8, 3}, "b");
  te::Tensor c = matmul(a, b);
  EXPECT_EQ(c->tag, "matmul");
  EXPECT_EQ(c->attrs.at("transpose_b"), 0);
  EXPECT_EQ(c->reduce_axes.size(), 1u);

  te::Tensor w = f32({3, 8}, "w"), bias = f32({3}, "bias");
  te::Tensor d = dense(a, w, bias);
  EXPECT_EQ(d->name, "dense_bias");
  EXPECT_EQ(d->tag, "injective");
  EXPECT_EQ(d->inputs()[0]->tag, "matmul");

  Pool2dAttrs p;
  p.kernel_h = p.kernel_w = p.stride_h = p.stride_w = 2;
  te::Tensor x = f32({1, 2, 6, 6});
  EXPECT_EQ(max_pool2d(x, p)->tag, "pool");
  te::Tensor avg = avg_pool2d(x, p);
  EXPECT_EQ(avg->tag, "injective");
  EXPECT_EQ(avg->inputs()[0]->tag, "pool");
  EXPECT_EQ(avg->inputs()[0]->attrs.at("count_include_pad"), 0);
  EXPECT_EQ(global_avg_pool(x)->shape, (Shape{1, 2, 1, 1}));
  EXPECT_EQ(global_max_pool(x)->tag, "pool");
}

TEST(Nn, DepthwiseHasNoChannelReduction) {
  Conv2dAttrs a;
  a.groups = 4;
  te::Tensor data = f32({1, 4, 5, 5}, "data"), w = f32({8, 1, 3, 3}, "w");
  te::Tensor out = conv2d(data, w, a);
  EXPECT_EQ(out->reduce_axes.size(), 2u);
  EXPECT_EQ(out->attrs.at("groups"), 4);
}

// Stride 2 along the rows: the padded input's columns are split by parity, so a tap's
// output columns read consecutive elements (the values are checked by the NnOps cases).
TEST(Nn, StridedDepthwiseSplitsPaddedColumnsByParity) {
  Conv2dAttrs a;
  a.groups = 4;
  a.stride_h = a.stride_w = 2;
  a.pad_top = a.pad_left = a.pad_bottom = a.pad_right = 1;
  te::Tensor data = f32({1, 4, 9, 13}, "data"), w = f32({4, 1, 3, 3}, "w");
  te::ComputeDAG dag({data, w}, {conv2d(data, w, a)});
  const te::OperationNode* pad = find(dag, "conv2d_pad");
  ASSERT_NE(pad, nullptr);
  EXPECT_EQ(pad->tag, "pad");
  EXPECT_EQ(pad->shape, (Shape{1, 4, 11, 2, 8}));  // 15 padded columns: 8 even, 7 odd (+1)
  // A dense conv, or stride 1, keeps the plain layout.
  a.groups = 1;
  te::Tensor dense_w = f32({4, 4, 3, 3}, "w");
  te::ComputeDAG plain({data, dense_w}, {conv2d(data, dense_w, a)});
  EXPECT_EQ(find(plain, "conv2d_pad")->shape, (Shape{1, 4, 11, 15}));
}

TEST(Nn, BadShapesAreUserErrors) {
  using ::testing::HasSubstr;
  try {
    matmul(f32({4, 5}, "a"), f32({6, 3}, "b"));
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("matmul"));
    EXPECT_THAT(e.what(), HasSubstr("4x5"));
    EXPECT_THAT(e.what(), HasSubstr("6x3"));
  }
  EXPECT_THROW(matmul(f32({2, 4, 5}, "a"), f32({3, 5, 3}, "b")), UserError);  // batch 2 vs 3
  EXPECT_THROW(matmul(f32({5}, "a"), f32({5, 3}, "b")), UserError);
  EXPECT_THROW(matmul(f32({4, 5}, "a"), te::placeholder({5, 3}, te::DataType::i32(), "b")),
               UserError);

  Conv2dAttrs g3;
  g3.groups = 3;
  try {
    conv2d(f32({1, 4, 5, 5}, "d"), f32({6, 1, 3, 3}, "w"), g3);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("divisible by groups"));
  }
  EXPECT_THROW(conv2d(f32({1, 4, 5, 5}, "d"), f32({6, 3, 3, 3}, "w"), Conv2dAttrs{}), UserError);
  EXPECT_THROW(conv2d(f32({1, 4, 2, 2}, "d"), f32({6, 4, 3, 3}, "w"), Conv2dAttrs{}), UserError);
  EXPECT_THROW(conv2d(f32({4, 5, 5}, "d"), f32({6, 4, 3, 3}, "w"), Conv2dAttrs{}), UserError);
  Conv2dAttrs s0;
  s0.stride_h = 0;
  EXPECT_THROW(conv2d(f32({1, 4, 5, 5}, "d"), f32({6, 4, 3, 3}, "w"), s0), UserError);
  EXPECT_THROW(conv2d(f32({1, 4, 5, 5}, "d"), f32({6, 4, 3, 3}, "w"), Conv2dAttrs{}, f32({5}, "b")),
               UserError);

  Pool2dAttrs p;
  p.kernel_h = p.kernel_w = 2;
  p.pad_top = 2;
  EXPECT_THROW(max_pool2d(f32({1, 1, 5, 5}), p), UserError);
  Pool2dAttrs big;
  big.kernel_h = big.kernel_w = 6;
  EXPECT_THROW(avg_pool2d(f32({1, 1, 5, 5}), big), UserError);
  EXPECT_THROW(avg_pool2d(te::placeholder({1, 1, 4, 4}, te::DataType::i32(), "x"), Pool2dAttrs{}),
               UserError);
  EXPECT_THROW(global_avg_pool(f32({2, 3})), UserError);
  EXPECT_THROW(dense(f32({2, 3}, "a"), f32({4, 3}, "w"), f32({3}, "b")), UserError);
}

namespace {

// Transposed convolution by its definition: every input element scatters weight * value
// into the full output at (i * stride + r * dilation), which pads then crop.
HostTensor conv_transpose_by_scatter(const HostTensor& x, const HostTensor& w,
                                     const ConvTranspose2dAttrs& a) {
  Shape out = conv2d_transpose_shape(x.shape, w.shape, a, "ref");
  HostTensor y(out, te::DataType::f32());
  int64_t cpg = x.shape[1] / a.groups, kpg = w.shape[1];
  for_each_index(x.shape, [&](const std::vector<int64_t>& i) {
    int64_t g = i[1] / cpg;
    double v = x.get((((i[0] * x.shape[1] + i[1]) * x.shape[2]) + i[2]) * x.shape[3] + i[3]);
    for (int64_t k = 0; k < kpg; ++k)
      for (int64_t r = 0; r < w.shape[2]; ++r)
        for (int64_t s = 0; s < w.shape[3]; ++s) {
          int64_t oh = i[2] * a.stride_h + r * a.dilation_h - a.pad_top;
          int64_t ow = i[3] * a.stride_w + s * a.dilation_w - a.pad_left;
          if (oh < 0 || ow < 0 || oh >= out[2] || ow >= out[3]) continue;
          int64_t oc = g * kpg + k;
          int64_t at = ((i[0] * out[1] + oc) * out[2] + oh) * out[3] + ow;
          double wv = w.get(((i[1] * kpg + k) * w.shape[2] + r) * w.shape[3] + s);
          y.set(at, y.get(at) + v * wv);
        }
  });
  return y;
}

}  // namespace

TEST(Nn, ConvTransposeMatchesScatter) {
  struct Case {
    Shape x, w;
    ConvTranspose2dAttrs a;
  };
  auto attrs = [](int64_t s, int64_t d, std::array<int64_t, 4> p, int64_t op, int64_t g) {
    ConvTranspose2dAttrs a;
    a.stride_h = s, a.stride_w = s == 1 ? 1 : s - 1;
    a.dilation_h = d, a.dilation_w = 1;
    a.pad_top = p[0], a.pad_left = p[1], a.pad_bottom = p[2], a.pad_right = p[3];
    a.output_padding_h = op;
    a.groups = g;
    return a;
  };
  std::vector<Case> cases = {
      {{1, 1, 3, 3}, {1, 2, 3, 3}, attrs(1, 1, {0, 0, 0, 0}, 0, 1)},
      {{2, 3, 4, 5}, {3, 2, 3, 2}, attrs(3, 1, {1, 2, 1, 0}, 1, 1)},
      {{1, 4, 3, 4}, {4, 3, 2, 3}, attrs(2, 2, {0, 1, 2, 1}, 1, 2)},
      {{1, 2, 3, 3}, {2, 1, 3, 3}, attrs(2, 1, {0, 0, -1, -2}, 0, 2)},  // negative: extend
      {{1, 6, 2, 2}, {6, 1, 1, 1}, attrs(1, 1, {0, 0, 0, 0}, 0, 6)},
  };
  Rng rng(11);
  for (const Case& c : cases) {
    te::Tensor x = f32(c.x, "x"), w = f32(c.w, "w");
    te::ComputeDAG dag({x, w}, {conv2d_transpose(x, w, c.a)});
    HostTensor xd = HostTensor::random(c.x, te::DataType::f32(), rng);
    HostTensor wd = HostTensor::random(c.w, te::DataType::f32(), rng);
    HostTensor got = evaluate_dag(dag, {xd, wd})[0];
    CompareResult r = compare(got, conv_transpose_by_scatter(xd, wd, c.a), 1e-4, 1e-5);
    EXPECT_TRUE(r.ok) << te::shape_str(c.x) << " * " << te::shape_str(c.w) << ": " << r.message;
  }
}

// Max and average (over the taps inside the input, or inside the padded input) of dilated
// windows, the last one past the padding (ceil_mode).
TEST(Nn, DilatedPoolsMatchALoop) {
  Pool2dAttrs a;
  a.kernel_h = 2, a.kernel_w = 3;
  a.stride_h = 1, a.stride_w = 2;
  a.dilation_h = 3, a.dilation_w = 2;
  a.pad_top = 2, a.pad_right = 1;
  a.ceil_mode = true;
  Shape in = {1, 2, 7, 8};
  Shape out = pool2d_shape(in, a, "p");
  EXPECT_EQ(out, (Shape{1, 2, 6, 3}));
  te::Tensor x = f32(in, "x");
  Rng rng(5);
  HostTensor xd = HostTensor::random(in, te::DataType::f32(), rng);
  for (int kind = 0; kind < 3; ++kind) {  // max, average, average counting the padding
    a.count_include_pad = kind == 2;
    te::Tensor y = kind == 0 ? max_pool2d(x, a) : avg_pool2d(x, a);
    HostTensor got = evaluate_dag(te::ComputeDAG({x}, {y}), {xd})[0];
    for_each_index(out, [&](const std::vector<int64_t>& o) {
      double best = -1e30, sum = 0;
      int64_t taps = 0;
      for (int64_t r = 0; r < a.kernel_h; ++r)
        for (int64_t s = 0; s < a.kernel_w; ++s) {
          int64_t h = o[2] * a.stride_h + r * a.dilation_h - a.pad_top;
          int64_t w = o[3] * a.stride_w + s * a.dilation_w - a.pad_left;
          bool inside = h >= 0 && h < in[2] && w >= 0 && w < in[3];
          bool padded = h >= -a.pad_top && h < in[2] + a.pad_bottom && w >= -a.pad_left &&
                        w < in[3] + a.pad_right;
          if (inside) best = std::max(best, xd.get(((o[1] * in[2]) + h) * in[3] + w));
          if (inside) sum += xd.get(((o[1] * in[2]) + h) * in[3] + w);
          if (kind == 2 ? padded : inside) ++taps;
        }
      double want = kind == 0 ? best : sum / double(taps);
      EXPECT_NEAR(got.get(((o[1] * out[2]) + o[2]) * out[3] + o[3]), want, 1e-5)
          << "kind " << kind << " at " << o[1] << o[2] << o[3];
    });
  }
  EXPECT_EQ(max_pool2d(x, a)->attrs.at("dilation_h"), 3);
  EXPECT_EQ(max_pool2d(x, Pool2dAttrs{})->attrs.count("dilation_h"), 0u);  // identity kept
}

TEST(Nn, ConvTransposeIsAConvOverTheSpreadInput) {
  ConvTranspose2dAttrs a;
  a.stride_h = a.stride_w = 2;
  te::Tensor x = f32({1, 2, 3, 3}, "x"), w = f32({2, 4, 3, 3}, "w"), b = f32({4}, "b");
  te::Tensor y = conv2d_transpose(x, w, a, b);
  EXPECT_EQ(y->shape, (Shape{1, 4, 7, 7}));
  EXPECT_EQ(y->name, "conv2d_transpose_bias");
  te::ComputeDAG dag({x, w, b}, {y});
  const te::OperationNode* spread = find(dag, "conv2d_transpose_spread");
  ASSERT_NE(spread, nullptr);
  EXPECT_EQ(spread->tag, "pad");
  EXPECT_EQ(spread->shape, (Shape{1, 2, 9, 9}));
  ASSERT_NE(find(dag, "conv2d_transpose"), nullptr);
  EXPECT_EQ(find(dag, "conv2d_transpose")->tag, "conv2d");

  ConvTranspose2dAttrs crop;
  crop.pad_top = crop.pad_bottom = 3;  // more than the 3x3 output of a 1x1 input
  EXPECT_THROW(conv2d_transpose(f32({1, 2, 1, 1}, "x"), w, crop), UserError);
  EXPECT_THROW(conv2d_transpose(f32({1, 3, 3, 3}, "x"), w, a), UserError);  // C mismatch
}

}  // namespace tuner::ops::testing

namespace tuner::ops::testing {

// F(4x4, 3x3) reproduces the direct conv: the transformed weight through the reference
// stages, over uneven sizes (partial tiles, a padded row of tiles, batch 2, asymmetric pads).
TEST(Winograd, ReferenceStagesEqualTheDirectConv) {
  Rng rng(5);
  for (auto [shape, pads] : std::vector<std::pair<Shape, std::array<int64_t, 4>>>{
           {{1, 3, 9, 11}, {1, 1, 1, 1}}, {{2, 4, 14, 14}, {0, 0, 0, 0}}, {{1, 2, 70, 5}, {1, 0, 2, 1}}}) {
    HostTensor x = HostTensor::random(shape, te::DataType::f32(), rng);
    HostTensor w = HostTensor::random({6, shape[1], 3, 3}, te::DataType::f32(), rng);
    HostTensor bias = HostTensor::random({6}, te::DataType::f32(), rng);
    Conv2dAttrs a;
    a.pad_top = pads[0], a.pad_left = pads[1], a.pad_bottom = pads[2], a.pad_right = pads[3];
    WinogradGeometry g = WinogradGeometry::make(shape, pads);
    HostTensor got = winograd_output_ref(winograd_product_ref(winograd_input_ref(x, g), winograd_weight(w)), g, bias);
    HostTensor want = ref::conv2d(x, w, a, bias);
    ASSERT_EQ(got.shape, want.shape);
    auto cmp = compare(got, want, 1e-4, 1e-4);
    EXPECT_EQ(cmp.mismatches, 0) << cmp.message;
  }
}

TEST(Winograd, GeometryPadsRowsToWholeVectors) {
  WinogradGeometry g = WinogradGeometry::make({1, 64, 56, 56}, {1, 1, 1, 1});
  EXPECT_EQ(g.tiles_h, 14);
  EXPECT_EQ(g.row, 16);
  EXPECT_EQ(g.tiles, 14 * 16);
  EXPECT_EQ(WinogradGeometry::make({1, 8, 28, 28}, {1, 1, 1, 1}).row, 8);
  EXPECT_EQ(WinogradGeometry::make({1, 8, 70, 70}, {1, 1, 1, 1}).row, 32);  // 18 tiles
}

}  // namespace tuner::ops::testing
