// Small models built here (ONNX protobuf in C++), for operator variants the node tests do not
// reach: attribute forms of older opsets, shape-like inputs as initializers and Constant
// nodes, graphs that fold to constants.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>

#include "graph/evaluate.h"
#include "graph/fusion.h"
#include "graph/onnx_import.h"
#include "graph/passes.h"
#include "onnx/model_builder.h"
#include "onnx/node_harness.h"
#include "support/error.h"

namespace tuner::onnx_tests {
namespace {

TEST(GraphModels, ReduceMeanAndMinWithAxesAttributes) {
  ModelBuilder b(13);
  b.input("x", {2, 3});
  b.output("mean", {2, 1});
  b.output("min", {3});
  set_ints(b.node("ReduceMean", {"x"}, {"mean"}), "axes", {1});
  auto& mn = b.node("ReduceMin", {"x"}, {"min"});
  set_ints(mn, "axes", {0});
  set_int(mn, "keepdims", 0);
  graph::Graph g = b.import();
  std::vector<HostTensor> out = graph::evaluate_graph(g, {iota({2, 3})});
  EXPECT_EQ(out[0].shape, (ops::Shape{2, 1}));
  EXPECT_EQ(values(out[0]), (std::vector<double>{1, 4}));
  EXPECT_EQ(out[1].shape, (ops::Shape{3}));
  EXPECT_EQ(values(out[1]), (std::vector<double>{0, 1, 2}));
}

// Dropout in training mode drops nothing with ratio 0, as PyTorch exports nn.Dropout(p=0.0)
// (torchvision's swin_t has 24): the identity; another ratio is refused (random dropout).
TEST(GraphModels, DropoutInTrainingModeWithRatioZeroIsTheIdentity) {
  for (float ratio : {0.0f, 0.5f}) {
    ModelBuilder b(13);
    b.input("x", {2, 3});
    b.output("y", {2, 3});
    onnx::TensorProto* r = b.model().mutable_graph()->add_initializer();
    r->set_name("ratio");
    r->set_data_type(onnx::TensorProto::FLOAT);
    r->add_float_data(ratio);
    onnx::TensorProto* t = b.model().mutable_graph()->add_initializer();
    t->set_name("training");
    t->set_data_type(onnx::TensorProto::BOOL);
    t->add_int32_data(1);
    b.node("Dropout", {"x", "ratio", "training"}, {"y"});
    if (ratio != 0) {
      EXPECT_THAT(b.import_error(), ::testing::HasSubstr("except with ratio 0"));
      continue;
    }
    graph::Graph g = b.import();
    EXPECT_EQ(values(graph::evaluate_graph(g, {iota({2, 3})})[0]), values(iota({2, 3})));
    EXPECT_EQ(values(run_compiled(g, {iota({2, 3})})[0]), values(iota({2, 3})));
  }
}

// align_corners maps output index o to o x (in - 1) / (out - 1) over the output length, as ONNX
// Runtime and PyTorch do: 3 columns at scale 2.5 give 7, and column 1 reads 1/3 of the way
// (ONNX's reference divides by 2.5 x 3 - 1 = 6.5: 0.3077, 0.9 off PyTorch over a model).
TEST(GraphModels, ResizeAlignCornersDividesByTheOutputLength) {
  for (const char* mode : {"linear", "nearest"}) {
    ModelBuilder b(13);
    b.input("x", {1, 1, 2, 3});
    b.output("y", {1, 1, 5, 7});
    b.float_initializer("scales", {1, 1, 2.5f, 2.5f});
    auto& n = b.node("Resize", {"x", "", "scales"}, {"y"});
    set_string(n, "mode", mode);
    set_string(n, "coordinate_transformation_mode", "align_corners");
    graph::Graph g = b.import();
    HostTensor x = iota({1, 1, 2, 3});  // rows 0 1 2 and 3 4 5
    for (const char* how : {"interpreted", "compiled"}) {
      std::vector<double> y =
          values(std::string(how) == "compiled" ? run_compiled(g, {x})[0] : graph::evaluate_graph(g, {x})[0]);
      ASSERT_EQ(y.size(), 35u);
      if (std::string(mode) == "linear") {
        EXPECT_NEAR(y[1], 1.0 / 3, 1e-6) << how;
        EXPECT_NEAR(y[3], 1.0, 1e-6) << how;                  // column 3 of 7: the middle
        EXPECT_NEAR(y[7 + 1], 0.75 + 1.0 / 3, 1e-6) << how;   // row 1 of 5: a quarter down
      } else {
        EXPECT_EQ(y[2], 1) << how;  // 2 x 2 / 6 = 0.67 rounds to 1 (0.62 also did)
        EXPECT_EQ(y[5], 2) << how;  // 5 x 2 / 6 = 1.67 rounds to 2 (1.54: 2)
      }
      EXPECT_EQ(y[34], 5) << how;  // the corners stay the corners
    }
  }
}

// Shape arithmetic that slices a shape to nothing and concatenates it (x.shape + x.shape[2:]
// of a matrix; torchvision's swin_t): the empty part folds away ("empty tensors are not
// supported" refused the model). An empty tensor anywhere else is still refused by name.
TEST(GraphModels, AnEmptySliceOfAShapeFoldsIntoItsConcat) {
  for (bool into_add : {false, true}) {
    ModelBuilder b(13);
    b.input("x", {2, 3});
    b.output("y", {2, 3});
    b.initializer("st", {1}, {2});
    b.initializer("en", {1}, {INT64_MAX});
    b.initializer("ax", {1}, {0});
    b.node("Shape", {"x"}, {"s"});
    b.node("Slice", {"s", "st", "en", "ax"}, {"e"});
    if (into_add) {
      b.node("Add", {"s", "e"}, {"s2"});
      b.node("Reshape", {"x", "s2"}, {"y"});
      EXPECT_THAT(b.import_error(), ::testing::HasSubstr("is empty (empty tensors are not supported)"));
      continue;
    }
    set_int(b.node("Concat", {"s", "e"}, {"s2"}), "axis", 0);
    b.node("Reshape", {"x", "s2"}, {"y"});
    graph::Graph g = b.import();
    EXPECT_EQ(values(run_compiled(g, {iota({2, 3})})[0]), values(iota({2, 3})));
  }
}

// A NaN is the extreme of its row (ReduceMax propagates it), so ArgMax and ArgMin give the
// first NaN's index, as numpy does; rows without NaN are unaffected.
TEST(GraphModels, ArgMaxAndArgMinPickTheFirstNaN) {
  ModelBuilder b(13);
  b.input("x", {3, 4});
  b.output("amax", {3}, onnx::TensorProto::INT64);
  b.output("amin", {3}, onnx::TensorProto::INT64);
  for (const char* op : {"ArgMax", "ArgMin"}) {
    auto& n = b.node(op, {"x"}, {std::string(op) == "ArgMax" ? "amax" : "amin"});
    set_int(n, "axis", 1);
    set_int(n, "keepdims", 0);
  }
  graph::Graph g = b.import();
  const double nan = std::nan("");
  HostTensor x({3, 4}, te::DataType::f32());
  std::vector<double> v = {2, nan, 0, nan, -1, 5, 3, -2, 1, 1, nan, -7};
  for (int64_t i = 0; i < 12; ++i) x.set(i, v[size_t(i)]);
  std::vector<HostTensor> out = graph::evaluate_graph(g, {x});
  EXPECT_EQ(values(out[0]), (std::vector<double>{1, 1, 2}));
  EXPECT_EQ(values(out[1]), (std::vector<double>{1, 3, 2}));
}

// TopK orders NaN above every number (numpy's sort, onnxruntime): each element one rank, so
// values and indices agree (a NaN shared the top rank with inf: value nan, index 1 + 4, and
// the last rank came out empty as 0).
TEST(GraphModels, TopKOrdersNaNAboveEveryNumber) {
  for (int64_t largest : {1, 0}) {
    ModelBuilder b(13);
    b.input("x", {1, 6});
    b.initializer("k", {1}, {6});
    b.output("v", {1, 6});
    b.output("i", {1, 6}, onnx::TensorProto::INT64);
    set_int(b.node("TopK", {"x", "k"}, {"v", "i"}), "largest", largest);
    graph::Graph g = b.import();
    const double nan = std::nan(""), inf = INFINITY;
    std::vector<double> x = {5, nan, 5, -inf, inf, 5};
    HostTensor in = HostTensor::from_values({1, 6}, te::DataType::f32(), x);
    std::vector<double> want_i =
        largest ? std::vector<double>{1, 4, 0, 2, 5, 3} : std::vector<double>{3, 0, 2, 5, 4, 1};
    for (const char* how : {"interpreted", "compiled"}) {
      std::vector<HostTensor> out =
          std::string(how) == "compiled" ? run_compiled(g, {in}) : graph::evaluate_graph(g, {in});
      EXPECT_EQ(values(out[1]), want_i) << how << " largest=" << largest;
      std::vector<double> v = values(out[0]);
      for (size_t j = 0; j < 6; ++j) {
        double want = x[size_t(want_i[j])];
        EXPECT_TRUE(std::isnan(want) ? std::isnan(v[j]) : v[j] == want)
            << how << " largest=" << largest << " value " << j << ": " << v[j];
      }
    }
  }
}

// Sign(NaN) is NaN (it was 0) and a zero row's LpNormalization is zero (it was 0 / 0 = NaN),
// as numpy and onnxruntime.
TEST(GraphModels, SignOfNaNAndLpNormalizationOfAZeroRow) {
  ModelBuilder b(13);
  b.input("x", {2, 3});
  b.output("sign", {2, 3});
  b.output("l1", {2, 3});
  b.output("l2", {2, 3});
  b.node("Sign", {"x"}, {"sign"});
  set_int(b.node("LpNormalization", {"x"}, {"l1"}), "p", 1);
  set_int(b.node("LpNormalization", {"x"}, {"l2"}), "p", 2);
  graph::Graph g = b.import();
  const double nan = std::nan("");
  HostTensor in = HostTensor::from_values({2, 3}, te::DataType::f32(), {0, 0, 0, 1, -2, 2});
  expect_outputs(
      g, {in},
      {{0, 0, 0, 1, -1, 1}, {0, 0, 0, 0.2, -0.4, 0.4}, {0, 0, 0, 1. / 3, -2. / 3, 2. / 3}});
  HostTensor with_nan =
      HostTensor::from_values({2, 3}, te::DataType::f32(), {nan, -0.0, 3, 1, -2, 2});
  for (const char* how : {"interpreted", "compiled"}) {
    std::vector<HostTensor> out = std::string(how) == "compiled"
                                      ? run_compiled(g, {with_nan})
                                      : graph::evaluate_graph(g, {with_nan});
    std::vector<double> sign = values(out[0]);
    EXPECT_TRUE(std::isnan(sign[0])) << how << ": Sign(NaN) = " << sign[0];
    EXPECT_EQ(sign[2], 1) << how;
  }
}

// LayerNormalization's Scale may broadcast to the normalized shape ([1] here, as
// onnxruntime takes it); it was refused.
TEST(GraphModels, LayerNormWithABroadcastScale) {
  ModelBuilder b(17);
  b.input("x", {2, 4});
  b.output("y", {2, 4});
  b.float_initializer("scale", {2.0f});
  b.float_initializer("bias", {0.5f, 0, 0, -1});
  b.node("LayerNormalization", {"x", "scale", "bias"}, {"y"});
  graph::Graph g = b.import();
  HostTensor x = HostTensor::from_values({2, 4}, te::DataType::f32(), {1, 2, 3, 4, 0, 0, 2, 2});
  // Rows normalized, (x - mean) / sqrt(var + 1e-5), then 2 * that + bias: row 0 has mean 2.5
  // and variance 1.25, row 1 mean 1 and variance 1.
  const double s0 = std::sqrt(1.25 + 1e-5), s1 = std::sqrt(1 + 1e-5);
  const double a = 0.5 / s0, c = 1.5 / s0, d = 1 / s1;
  expect_outputs(
      g, {x}, {{-2 * c + 0.5, -2 * a, 2 * a, 2 * c - 1, -2 * d + 0.5, -2 * d, 2 * d, 2 * d - 1}});
}

TEST(GraphModels, RangeOfConstantsFoldsAndFeedsARuntimeAdd) {
  ModelBuilder b(13);
  b.input("x", {3});
  b.output("y", {3});
  b.float_initializer("start", {1});
  b.float_initializer("limit", {7});
  b.float_initializer("delta", {2});
  // Range wants scalars: reshape the 1-element initializers to shape [].
  b.initializer("scalar", {0}, {});
  for (const char* s : {"start", "limit", "delta"})
    b.node("Reshape", {s, "scalar"}, {std::string(s) + "_s"});
  b.node("Range", {"start_s", "limit_s", "delta_s"}, {"r"});
  b.node("Add", {"x", "r"}, {"y"});
  graph::Graph g = b.import();
  EXPECT_EQ(g.num_nodes(), 1u);  // everything but the Add folded
  std::vector<HostTensor> out = graph::evaluate_graph(g, {iota({3})});
  EXPECT_EQ(values(out[0]), (std::vector<double>{1, 4, 7}));
}

TEST(GraphModels, SplitByAttributeAndByInput) {
  for (int64_t opset : {11, 13}) {
    SCOPED_TRACE(opset);
    ModelBuilder b(opset);
    b.input("x", {5, 2});
    b.output("a", {2, 2});
    b.output("b", {3, 2});
    auto& n = b.node("Split", opset < 13 ? std::vector<std::string>{"x"}
                                         : std::vector<std::string>{"x", "sizes"},
                     {"a", "b"});
    if (opset < 13) set_ints(n, "split", {2, 3});
    else b.initializer("sizes", {2}, {2, 3});
    graph::Graph g = b.import();
    std::vector<HostTensor> out = graph::evaluate_graph(g, {iota({5, 2})});
    EXPECT_EQ(values(out[0]), (std::vector<double>{0, 1, 2, 3}));
    EXPECT_EQ(out[1].shape, (ops::Shape{3, 2}));
    EXPECT_EQ(values(out[1]).front(), 4);
  }
}

TEST(GraphModels, ResizeOpset11WithScalesAndAnEmptyRoi) {
  ModelBuilder b(11);
  b.input("x", {1, 1, 2});
  b.output("y", {1, 1, 4});
  b.float_initializer("roi", {});
  b.float_initializer("scales", {1, 1, 2});
  auto& n = b.node("Resize", {"x", "roi", "scales"}, {"y"});
  set_string(n, "coordinate_transformation_mode", "asymmetric");
  set_string(n, "nearest_mode", "floor");
  graph::Graph g = b.import();
  std::vector<HostTensor> out = graph::evaluate_graph(g, {iota({1, 1, 2})});
  EXPECT_EQ(values(out[0]), (std::vector<double>{0, 0, 1, 1}));
}

// Antialiased bilinear and bicubic downsamples of a 64x64 plane to 4x3 (many taps per output
// along both axes: sums over tap tables), compiled against interpreted; a constant image
// stays constant (each output's weights sum to 1).
TEST(GraphModels, ResizeAntialiasWithManyTaps) {
  for (const char* mode : {"linear", "cubic"}) {
    ModelBuilder b(18);
    b.input("x", {1, 1, 64, 64});
    b.output("y", {1, 1, 4, 3});
    b.initializer("sizes", {4}, {1, 1, 4, 3});
    auto& n = b.node("Resize", {"x", "", "", "sizes"}, {"y"});
    set_string(n, "mode", mode);
    set_int(n, "antialias", 1);
    graph::Graph g = b.import();
    HostTensor ones = HostTensor::from_values({1, 1, 64, 64}, te::DataType::f32(), std::vector<double>(4096, 2.5));
    std::vector<HostTensor> in = {iota({1, 1, 64, 64})};
    expect_compiled_as_interpreted(g, in);
    expect_outputs(g, {ones}, {std::vector<double>(12, 2.5)});
  }
}

// The output size is floor(size x scale) in float32, as ONNX's shape inference and ONNX
// Runtime compute it: 3 x float(7/3) is 7 there (6 in double, and the model was refused).
TEST(GraphModels, ResizeScalesGiveTheSizeOfFloat32Arithmetic) {
  ModelBuilder b(13);
  b.input("x", {1, 1, 3, 3});
  b.output("y", {1, 1, 7, 5});
  b.float_initializer("scales", {1, 1, 7.0f / 3, 5.0f / 3});
  auto& n = b.node("Resize", {"x", "", "scales"}, {"y"});
  set_string(n, "coordinate_transformation_mode", "asymmetric");
  set_string(n, "nearest_mode", "round_prefer_ceil");
  graph::Graph g = b.import();
  std::vector<HostTensor> out = graph::evaluate_graph(g, {iota({1, 1, 3, 3})});
  ASSERT_EQ(out[0].shape, (ops::Shape{1, 1, 7, 5}));
  // onnxruntime 1.32's output.
  EXPECT_EQ(values(out[0]),
            (std::vector<double>{0, 1, 1, 2, 2, 0, 1, 1, 2, 2, 3, 4, 4, 5, 5, 3, 4, 4,
                                 5, 5, 6, 7, 7, 8, 8, 6, 7, 7, 8, 8, 6, 7, 7, 8, 8}));
}

// A ceil_mode pooling whose last window would start in the end padding: that window is
// dropped (ONNX Runtime, PyTorch, later ONNX), though libonnx 1.12's shape inference keeps it
// (2x2, kernel 2, stride 2, pads 0,0,1,1: 1x1, not 2x2): the model imports with the 1x1 shape,
// also for what is computed from it.
TEST(GraphModels, CeilModePoolingDropsAWindowStartingInThePadding) {
  for (const char* op : {"MaxPool", "AveragePool"}) {
    ModelBuilder b(13);
    b.input("x", {1, 1, 2, 2});
    b.output("y", {1, 1, 1, 1});
    auto& n = b.node(op, {"x"}, {"p"});
    set_ints(n, "kernel_shape", {2, 2});
    set_ints(n, "strides", {2, 2});
    set_ints(n, "pads", {0, 0, 1, 1});
    set_int(n, "ceil_mode", 1);
    b.node("Relu", {"p"}, {"y"});
    graph::Graph g = b.import();
    std::vector<HostTensor> out = graph::evaluate_graph(g, {iota({1, 1, 2, 2})});
    EXPECT_EQ(out[0].shape, (ops::Shape{1, 1, 1, 1})) << op;
    EXPECT_EQ(values(out[0]).front(), std::string(op) == "MaxPool" ? 3 : 1.5) << op;
  }
}

TEST(GraphModels, ExpandAndTileWithInitializers) {
  ModelBuilder b(13);
  b.input("x", {2, 1});
  b.output("y", {2, 2, 6});
  b.initializer("shape", {3}, {2, 2, 3});
  b.initializer("reps", {3}, {1, 1, 2});
  b.node("Expand", {"x", "shape"}, {"e"});
  b.node("Tile", {"e", "reps"}, {"y"});
  graph::Graph g = b.import();
  std::vector<HostTensor> out = graph::evaluate_graph(g, {iota({2, 1})});
  EXPECT_EQ(out[0].shape, (ops::Shape{2, 2, 6}));
  EXPECT_EQ(values(out[0]).back(), 1);
  EXPECT_EQ(values(out[0])[6], 1);
}

// The node tests of these reductions are all opset 18 (axes as an input), above what Tuner
// reads: the opset 13 forms (axes as an attribute) here.
TEST(GraphModels, ReductionsWithAnElementMap) {
  ModelBuilder b(13);
  b.input("x", {2, 3});
  b.input("big", {1, 3});
  const char* ops[] = {"ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceProd",
                       "ReduceLogSumExp"};
  for (const char* op : ops) {
    b.output(op, {2});
    auto& n = b.node(op, {"x"}, {op});
    set_ints(n, "axes", {1});
    set_int(n, "keepdims", 0);
  }
  b.output("lse_big", {1, 1});
  set_ints(b.node("ReduceLogSumExp", {"big"}, {"lse_big"}), "axes", {-1});
  graph::Graph g = b.import();
  HostTensor x = floats({2, 3}, {1, -2, 3, 4, 5, -6});
  HostTensor big = floats({1, 3}, {1000, 1000, -1e30});  // e^1000 overflows float
  expect_outputs(g, {x, big},
                 {{6, 15},
                  {std::sqrt(14.0), std::sqrt(77.0)},
                  {14, 77},
                  {std::log(2.0), std::log(3.0)},
                  {-6, -120},
                  {std::log(std::exp(1.0) + std::exp(-2.0) + std::exp(3.0)),
                   std::log(std::exp(4.0) + std::exp(5.0) + std::exp(-6.0))},
                  {1000 + std::log(2.0)}});
}

// CumSum's node tests hold float64 data, which Tuner does not read.
TEST(GraphModels, CumSumForwardExclusiveAndReversed) {
  ModelBuilder b(14);
  b.input("x", {2, 3});
  b.initializer("axis", {}, {1});
  for (const char* o : {"plain", "exclusive", "reverse"}) b.output(o, {2, 3});
  b.node("CumSum", {"x", "axis"}, {"plain"});
  set_int(b.node("CumSum", {"x", "axis"}, {"exclusive"}), "exclusive", 1);
  set_int(b.node("CumSum", {"x", "axis"}, {"reverse"}), "reverse", 1);
  graph::Graph g = b.import();
  expect_outputs(g, {floats({2, 3}, {1, -2, 3, 4, 5, -6})},
                 {{1, -1, 2, 4, 9, 3}, {0, 1, -1, 0, 4, 9}, {2, 1, 3, 3, -1, -6}});
}

// Einsum's node tests hold float64 data: each form here against loops over the same values.
TEST(GraphModels, EinsumForms) {
  ModelBuilder b(13);
  b.input("a", {2, 3});
  b.input("c", {3, 4});
  b.input("sq", {2, 3, 3});
  b.input("q", {2, 2, 3, 4});
  b.input("k", {2, 2, 5, 4});
  struct Form {
    const char* eq;
    std::vector<std::string> in;
    std::vector<int64_t> shape;
  };
  std::vector<Form> forms = {{"ij,jk->ik", {"a", "c"}, {2, 4}},
                             {"ij->ji", {"a"}, {3, 2}},
                             {"ij", {"a"}, {2, 3}},               // implicit: as is
                             {"ij->", {"a"}, {}},                 // sum of all
                             {"...ii->...i", {"sq"}, {2, 3}},     // batched diagonal
                             {"bhid,bhjd->bhij", {"q", "k"}, {2, 2, 3, 5}},
                             {"...id,...jd", {"q", "k"}, {2, 2, 3, 5}},   // implicit: ij
                             {"ij,jk->ki", {"a", "c"}, {4, 2}},
                             {"bij,jk->bik", {"sq", "c"}, {2, 3, 4}},   // extra rows of A
                             {"ij,bjk->bik", {"a", "sq"}, {2, 2, 3}}};  // extra columns of B
  for (size_t f = 0; f < forms.size(); ++f) {
    std::string out = "y" + std::to_string(f);
    b.output(out, forms[f].shape);
    set_string(b.node("Einsum", forms[f].in, {out}), "equation", forms[f].eq);
  }
  graph::Graph g = b.import();
  auto ramp = [](const std::vector<int64_t>& shape, double scale) {
    HostTensor t(shape, te::DataType::f32());
    for (int64_t i = 0; i < t.num_elements(); ++i) t.set(i, scale * double((i * 7) % 11) - 2);
    return t;
  };
  HostTensor a = ramp({2, 3}, 0.5), cm = ramp({3, 4}, 0.25), sq = ramp({2, 3, 3}, 1),
             q = ramp({2, 2, 3, 4}, 0.125), k = ramp({2, 2, 5, 4}, 0.5);
  std::vector<std::vector<double>> want(forms.size());
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j) {
      double s = 0;
      for (int x = 0; x < 3; ++x) s += a.get(i * 3 + x) * cm.get(x * 4 + j);
      want[0].push_back(s);
    }
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 2; ++i) want[1].push_back(a.get(i * 3 + j));
  want[2] = values(a);
  double total = 0;
  for (double v : values(a)) total += v;
  want[3] = {total};
  for (int n = 0; n < 2; ++n)
    for (int i = 0; i < 3; ++i) want[4].push_back(sq.get(n * 9 + i * 3 + i));
  for (int bh = 0; bh < 4; ++bh)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 5; ++j) {
        double s = 0;
        for (int d = 0; d < 4; ++d) s += q.get((bh * 3 + i) * 4 + d) * k.get((bh * 5 + j) * 4 + d);
        want[5].push_back(s);
      }
  want[6] = want[5];
  for (int kk = 0; kk < 4; ++kk)
    for (int i = 0; i < 2; ++i) want[7].push_back(want[0][size_t(i * 4 + kk)]);
  for (int bb = 0; bb < 2; ++bb)
    for (int i = 0; i < 3; ++i)
      for (int kk = 0; kk < 4; ++kk) {
        double sum = 0;
        for (int j = 0; j < 3; ++j) sum += sq.get((bb * 3 + i) * 3 + j) * cm.get(j * 4 + kk);
        want[8].push_back(sum);
      }
  for (int bb = 0; bb < 2; ++bb)
    for (int i = 0; i < 2; ++i)
      for (int kk = 0; kk < 3; ++kk) {
        double sum = 0;
        for (int j = 0; j < 3; ++j) sum += a.get(i * 3 + j) * sq.get((bb * 3 + j) * 3 + kk);
        want[9].push_back(sum);
      }
  expect_outputs(g, {a, cm, sq, q, k}, want);
  // The six products became MatMul nodes (lower_einsum), of which the two attention forms
  // are one after common subexpressions; the one-operand forms stay.
  graph::Graph lowered = g;
  graph::run_passes(lowered);
  int einsums = 0, matmuls = 0;
  for (const auto& n : lowered.nodes) {
    einsums += n.op == "Einsum";
    matmuls += n.op == "MatMul";
  }
  EXPECT_EQ(matmuls, 5);
  EXPECT_EQ(einsums, 4);
}

// Einsum lowered to a MatMul with a transposed operand and a transposed product: the pass
// read the output's shape through a reference that adding the operand's transpose had left
// dangling (valgrind: invalid read; "permutation [1,0,2] does not match shape scalar").
TEST(GraphModels, EinsumTransposingAnOperandAndTheProduct) {
  ModelBuilder b(13);
  b.input("a", {2, 3, 4});
  b.input("c", {4, 3, 5});
  b.output("y", {2, 3, 5});
  set_string(b.node("Einsum", {"a", "c"}, {"y"}), "equation", "ibj,jbk->ibk");
  graph::Graph g = b.import();
  HostTensor a({2, 3, 4}, te::DataType::f32()), c({4, 3, 5}, te::DataType::f32());
  for (int64_t i = 0; i < a.num_elements(); ++i) a.set(i, double((i * 7) % 11) - 5);
  for (int64_t i = 0; i < c.num_elements(); ++i) c.set(i, 0.5 * double((i * 5) % 9) - 2);
  std::vector<double> want;
  for (int i = 0; i < 2; ++i)
    for (int bb = 0; bb < 3; ++bb)
      for (int k = 0; k < 5; ++k) {
        double sum = 0;
        for (int j = 0; j < 4; ++j) sum += a.get((i * 3 + bb) * 4 + j) * c.get((j * 3 + bb) * 5 + k);
        want.push_back(sum);
      }
  expect_outputs(g, {a, c}, {want});
}

// LpNormalization and GlobalLpPool have no node tests in the onnx package we use.
TEST(GraphModels, LpNormsOfRowsAndPlanes) {
  ModelBuilder b(13);
  b.input("x", {1, 2, 1, 2});
  b.output("l2", {1, 2, 1, 2});
  b.output("l1", {1, 2, 1, 2});
  b.output("pool", {1, 2, 1, 1});
  b.node("LpNormalization", {"x"}, {"l2"});
  set_int(b.node("LpNormalization", {"x"}, {"l1"}), "p", 1);
  b.node("GlobalLpPool", {"x"}, {"pool"});
  graph::Graph g = b.import();
  expect_outputs(g, {floats({1, 2, 1, 2}, {3, -4, 1, 0})},
                 {{0.6, -0.8, 1, 0}, {3.0 / 7, -4.0 / 7, 1, 0}, {5, 1}});
}

// Pad's edge and reflect node tests are opset 18; the modes are the same at opset 13.
TEST(GraphModels, EdgeAndReflectPads) {
  ModelBuilder b(13);
  b.input("x", {2, 3});
  b.initializer("pads", {4}, {0, 2, 1, 1});
  b.output("edge", {3, 6});
  b.output("reflect", {3, 6});
  set_string(b.node("Pad", {"x", "pads"}, {"edge"}), "mode", "edge");
  set_string(b.node("Pad", {"x", "pads"}, {"reflect"}), "mode", "reflect");
  graph::Graph g = b.import();
  expect_outputs(g, {floats({2, 3}, {1, 2, 3, 4, 5, 6})},
                 {{1, 1, 1, 2, 3, 3, 4, 4, 4, 5, 6, 6, 4, 4, 4, 5, 6, 6},
                  {3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5, 3, 2, 1, 2, 3, 2}});
}

// MatMulInteger's one node test has scalar zero points: a per-row and a per-column one here.
TEST(GraphModels, MatMulIntegerWithZeroPointsPerRowAndColumn) {
  ModelBuilder b(13);
  b.input("a", {2, 3}, onnx::TensorProto::UINT8);
  b.input("b", {3, 2}, onnx::TensorProto::INT8);
  b.input("azp", {2}, onnx::TensorProto::UINT8);
  b.input("bzp", {2}, onnx::TensorProto::INT8);
  b.output("y", {2, 2}, onnx::TensorProto::INT32);
  b.node("MatMulInteger", {"a", "b", "azp", "bzp"}, {"y"});
  graph::Graph g = b.import();
  auto t = [](std::vector<int64_t> shape, te::DataType d, std::vector<double> v) {
    return HostTensor::from_values(std::move(shape), d, v);
  };
  std::vector<HostTensor> in = {t({2, 3}, te::DataType::u8(), {10, 20, 30, 200, 100, 0}),
                                t({3, 2}, te::DataType::i8(), {1, -2, 3, 4, -5, 6}),
                                t({2}, te::DataType::u8(), {10, 100}),
                                t({2}, te::DataType::i8(), {1, -1})};
  // (a - azp[row]) x (b - bzp[col]): rows {0, 10, 20} and {100, 0, -100}; columns {0, 2, -6}
  // and {-1, 5, 7}.
  expect_outputs(g, in, {{0 + 20 - 120, 0 + 50 + 140, 0 + 0 + 600, -100 + 0 - 700}});
}

// n weights in [-0.34, 0.34], a fixed pattern shifted by `seed`.
std::vector<float> weight_pattern(size_t n, int seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = float((int(i * 5 + size_t(seed)) % 23) - 11) / 32.0f;
  return v;
}

// 250 output channels (no block of one or two vectors divides them): the compiled convs, 1x1
// and 3x3, compute whole blocks and the slice back to 250 sits in their epilogue, its last
// block partial. The interpreted graph has no target passes: the reference.
TEST(GraphModels, ConvsWithOutputChannelsNoBlockDivides) {
  ModelBuilder b(13);
  b.input("x", {1, 8, 5, 7});
  b.output("y", {1, 250, 5, 7});
  b.output("z", {1, 250, 5, 7});
  b.float_initializer("w1", weight_pattern(250 * 8, 1), {250, 8, 1, 1});
  b.float_initializer("b1", weight_pattern(250, 2));
  b.float_initializer("w3", weight_pattern(250 * 8 * 9, 3), {250, 8, 3, 3});
  b.node("Conv", {"x", "w1", "b1"}, {"c1"});
  b.node("Relu", {"c1"}, {"y"});
  set_ints(b.node("Conv", {"x", "w3"}, {"z"}), "pads", {1, 1, 1, 1});
  graph::Graph g = b.import();
  std::vector<HostTensor> in = {iota({1, 8, 5, 7})};
  expect_compiled_as_interpreted(g, in);
}

// Packed convs whose SiLU is computed on the tile's channel vectors before the transposed
// store (a stride-2 stem, a 1x1 expansion): the outputs as the graph evaluator's.
TEST(GraphModels, PackedConvsWithSiluEpilogues) {
  ModelBuilder b(13);
  b.input("x", {1, 3, 30, 30});
  b.output("y", {1, 64, 15, 15});
  b.float_initializer("w0", weight_pattern(32 * 3 * 9, 1), {32, 3, 3, 3});
  b.float_initializer("b0", weight_pattern(32, 2));
  b.float_initializer("w1", weight_pattern(64 * 32, 3), {64, 32, 1, 1});
  onnx::NodeProto& stem = b.node("Conv", {"x", "w0", "b0"}, {"c0"});
  set_ints(stem, "strides", {2, 2});
  set_ints(stem, "pads", {1, 1, 1, 1});
  b.node("Sigmoid", {"c0"}, {"s0"});
  b.node("Mul", {"c0", "s0"}, {"a0"});
  b.node("Conv", {"a0", "w1"}, {"c1"});
  b.node("Sigmoid", {"c1"}, {"s1"});
  b.node("Mul", {"s1", "c1"}, {"y"});
  graph::Graph g = b.import();
  std::vector<HostTensor> in = {iota({1, 3, 30, 30})};
  expect_compiled_as_interpreted(g, in);
}

// Squeeze-and-excite gates folded into the weights of the conv after them
// (graph::fold_channel_scales_into_weights): a 1x1 and a padded 3x3 projection, packed.
TEST(GraphModels, SqueezeExciteScalesFoldedIntoTheProjection) {
  ModelBuilder b(13);
  b.input("x", {1, 16, 14, 14});
  b.output("y", {1, 32, 14, 14});
  b.output("z", {1, 16, 14, 14});
  b.float_initializer("we", weight_pattern(64 * 16, 1), {64, 16, 1, 1});
  b.float_initializer("w1", weight_pattern(8 * 64, 2), {8, 64, 1, 1});
  b.float_initializer("w2", weight_pattern(64 * 8, 3), {64, 8, 1, 1});
  b.float_initializer("b2", weight_pattern(64, 4));
  b.float_initializer("wp", weight_pattern(32 * 64, 5), {32, 64, 1, 1});
  b.float_initializer("w3", weight_pattern(16 * 64 * 9, 6), {16, 64, 3, 3});
  b.node("Conv", {"x", "we"}, {"h"});
  b.node("GlobalAveragePool", {"h"}, {"p"});
  b.node("Conv", {"p", "w1"}, {"q"});
  b.node("Relu", {"q"}, {"r"});
  b.node("Conv", {"r", "w2", "b2"}, {"g"});
  b.node("Sigmoid", {"g"}, {"s"});
  b.node("Mul", {"h", "s"}, {"hs"});
  b.node("Conv", {"hs", "wp"}, {"y"});
  b.node("Mul", {"s", "h"}, {"hs2"});
  set_ints(b.node("Conv", {"hs2", "w3"}, {"z"}), "pads", {1, 1, 1, 1});
  graph::Graph g = b.import();
  std::vector<HostTensor> in = {iota({1, 16, 14, 14})};
  expect_compiled_as_interpreted(g, in);
}

// Concats written in place by their inputs' kernels (graph::in_place_concats): one of two
// convs, then one of that concat and a third conv (an input made by a concat: a copy
// kernel), and an input of the first read again after both. The concat's memory is live
// from its first part's kernel on: `t`, made and read between its two parts, must not take
// it.
TEST(GraphModels, ConcatsWrittenInPlace) {
  ModelBuilder b(13);
  b.input("x", {1, 8, 5, 8});
  b.output("y", {1, 4, 5, 8});
  b.output("s", {1, 8, 5, 8});
  b.float_initializer("wa", weight_pattern(8 * 8, 1), {8, 8, 1, 1});
  b.float_initializer("wc", weight_pattern(16 * 48 * 9, 2), {16, 48, 3, 3});
  b.float_initializer("wd", weight_pattern(8 * 8, 3), {8, 8, 1, 1});
  b.float_initializer("wy", weight_pattern(4 * 32, 4), {4, 32, 1, 1});
  b.float_initializer("wt", weight_pattern(48 * 8, 5), {48, 8, 1, 1});  // the largest buffer
  b.node("Conv", {"x", "wa"}, {"ca"});
  b.node("Relu", {"ca"}, {"a"});
  b.node("Conv", {"x", "wt"}, {"ct"});
  b.node("Sigmoid", {"ct"}, {"t"});
  set_ints(b.node("Conv", {"t", "wc"}, {"cc"}), "pads", {1, 1, 1, 1});
  b.node("Relu", {"cc"}, {"c"});
  set_int(b.node("Concat", {"a", "c"}, {"ac"}), "axis", 1);
  b.node("Conv", {"x", "wd"}, {"d"});
  set_int(b.node("Concat", {"ac", "d"}, {"acd"}), "axis", 1);
  b.node("Conv", {"acd", "wy"}, {"y"});
  b.node("Sigmoid", {"a"}, {"s"});
  graph::Graph g = b.import();
  ASSERT_EQ(graph::in_place_concats(g).size(), 1u);
  std::vector<HostTensor> in = {iota({1, 8, 5, 8})};
  expect_compiled_as_interpreted(g, in);
}

TEST(GraphModels, UnsupportedVariantsAreOneLineUserErrors) {
  ModelBuilder b(13);
  b.input("x", {1, 1, 4});
  b.output("y", {1, 1, 8});
  b.float_initializer("roi", {});
  b.float_initializer("scales", {1, 1, 2});
  set_string(b.node("Resize", {"x", "roi", "scales"}, {"y"}), "mode", "bicubic");
  std::string error = b.import_error();
  EXPECT_THAT(error, ::testing::HasSubstr("unknown mode 'bicubic'"));
  EXPECT_EQ(error.find('\n'), std::string::npos);
}

// PyTorch 2 and onnx >= 1.15 write IR versions 9-11, newer than Debian's libonnx checker
// knows; such models import, and the checker still checks them.
TEST(GraphModels, NewerIrVersionsAreCheckedAndImported) {
  for (int64_t ir : {9, 10, 11}) {
    ModelBuilder b(17);
    b.model().set_ir_version(ir);
    b.input("x", {2, 3});
    b.output("y", {2, 3});
    b.node("Relu", {"x"}, {"y"});
    graph::Graph g = b.import();
    EXPECT_EQ(values(run_compiled(g, {iota({2, 3})})[0]), values(iota({2, 3})));
    b.node("Relu", {"missing"}, {"z"});
    EXPECT_THAT(b.import_error(), ::testing::HasSubstr("invalid ONNX model"));
  }
}

// A ShuffleNet unit: half the channels through a conv, concatenated with the other half, the
// channels interleaved (Reshape, Transpose, Reshape) and split again. One kernel writes both
// halves of the split, each 14-wide vector one row of the concat (its flattened index
// simplifies to a ramp). The quantized unit is in test_integer_ops.cc.
TEST(GraphModels, ChannelShuffleAfterAConcat) {
  ModelBuilder b(13);
  b.input("x", {1, 24, 14, 14});
  b.output("y0", {1, 12, 14, 14});
  b.output("y1", {1, 12, 14, 14});
  b.initializer("halves", {2}, {12, 12});
  b.float_initializer("w", weight_pattern(12 * 12, 1), {12, 12, 1, 1});
  b.initializer("grouped", {5}, {1, 2, 12, 14, 14});
  b.initializer("flat", {4}, {1, 24, 14, 14});
  set_int(b.node("Split", {"x", "halves"}, {"a", "c"}), "axis", 1);
  b.node("Conv", {"c", "w"}, {"cc"});
  b.node("Relu", {"cc"}, {"r"});
  set_int(b.node("Concat", {"a", "r"}, {"cat"}), "axis", 1);
  b.node("Reshape", {"cat", "grouped"}, {"g"});
  set_ints(b.node("Transpose", {"g"}, {"t"}), "perm", {0, 2, 1, 3, 4});
  b.node("Reshape", {"t", "flat"}, {"s"});
  set_int(b.node("Split", {"s", "halves"}, {"y0", "y1"}), "axis", 1);
  graph::Graph g = b.import();
  expect_compiled_as_interpreted(g, {iota({1, 24, 14, 14})});
}

}  // namespace
}  // namespace tuner::onnx_tests
