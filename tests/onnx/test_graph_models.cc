// Small models built here (ONNX protobuf in C++), for operator variants the node tests do not
// reach: attribute forms of older opsets, shape-like inputs as initializers and Constant
// nodes, graphs that fold to constants.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "graph/evaluate.h"
#include "graph/onnx_import.h"
#include "graph/passes.h"
#include "onnx/node_harness.h"
#include "support/error.h"
#include "support/rng.h"

namespace tuner::onnx_tests {
namespace {

namespace fs = std::filesystem;
using ops::HostTensor;

// Builds a one-graph model of the default domain at `opset`.
class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset) {
    m_.set_ir_version(8);
    m_.add_opset_import()->set_version(opset);
    m_.mutable_graph()->set_name("test");
  }

  void input(const std::string& name, const std::vector<int64_t>& shape, int type = kFloat) {
    value_info(m_.mutable_graph()->add_input(), name, type, shape);
  }
  void output(const std::string& name, const std::vector<int64_t>& shape, int type = kFloat) {
    value_info(m_.mutable_graph()->add_output(), name, type, shape);
  }
  void initializer(const std::string& name, const std::vector<int64_t>& shape,
                   const std::vector<int64_t>& values) {
    onnx::TensorProto* t = m_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : shape) t->add_dims(d);
    for (int64_t v : values) t->add_int64_data(v);
  }
  void float_initializer(const std::string& name, const std::vector<float>& values) {
    onnx::TensorProto* t = m_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(int64_t(values.size()));
    for (float v : values) t->add_float_data(v);
  }
  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs) {
    onnx::NodeProto* n = m_.mutable_graph()->add_node();
    n->set_op_type(op);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }
  onnx::ModelProto& model() { return m_; }
  /// Writes the model into a fresh temporary folder and imports it.
  graph::Graph import() {
    fs::path dir = fs::temp_directory_path() / ("tuner-graph-model-" + std::to_string(getpid()));
    fs::create_directories(dir);
    std::string path = (dir / "model.onnx").string();
    {
      std::ofstream out(path, std::ios::binary);
      m_.SerializeToOstream(&out);
    }
    struct Cleanup {
      fs::path dir;
      ~Cleanup() { fs::remove_all(dir); }
    } cleanup{dir};
    return graph::import_onnx(path);
  }

  static constexpr int kFloat = onnx::TensorProto::FLOAT;

 private:
  static void value_info(onnx::ValueInfoProto* vi, const std::string& name, int type,
                         const std::vector<int64_t>& shape) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    tt->mutable_shape();
    for (int64_t d : shape) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }

  onnx::ModelProto m_;
};

void set_ints(onnx::NodeProto& n, const std::string& key, const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(key);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void set_int(onnx::NodeProto& n, const std::string& key, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(key);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void set_string(onnx::NodeProto& n, const std::string& key, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(key);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

HostTensor iota(const std::vector<int64_t>& shape) {
  HostTensor t(shape, te::DataType::f32());
  for (int64_t i = 0; i < t.num_elements(); ++i) t.set(i, double(i));
  return t;
}

std::vector<double> values(const HostTensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.num_elements(); ++i) v.push_back(t.get(i));
  return v;
}

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

HostTensor floats(const std::vector<int64_t>& shape, const std::vector<double>& v) {
  return HostTensor::from_values(shape, te::DataType::f32(), v);
}

// Each output of `g` on `in`, interpreted and compiled, against `want` (within 1e-5 relative).
void expect_outputs(const graph::Graph& g, const std::vector<HostTensor>& in,
                    const std::vector<std::vector<double>>& want) {
  for (const char* how : {"interpreted", "compiled"}) {
    std::vector<HostTensor> out =
        std::string(how) == "compiled" ? run_compiled(g, in) : graph::evaluate_graph(g, in);
    ASSERT_EQ(out.size(), want.size()) << how;
    for (size_t i = 0; i < want.size(); ++i) {
      std::vector<double> got = values(out[i]);
      ASSERT_EQ(got.size(), want[i].size()) << how << " output " << i;
      for (size_t k = 0; k < got.size(); ++k)
        EXPECT_NEAR(got[k], want[i][k], 1e-5 * std::max(1.0, std::abs(want[i][k])))
            << how << " output " << i << " element " << k;
    }
  }
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

TEST(GraphModels, UnsupportedVariantsAreOneLineUserErrors) {
  ModelBuilder b(13);
  b.input("x", {1, 1, 4});
  b.output("y", {1, 1, 8});
  b.float_initializer("roi", {});
  b.float_initializer("scales", {1, 1, 2});
  set_string(b.node("Resize", {"x", "roi", "scales"}, {"y"}), "mode", "bicubic");
  try {
    b.import();
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("unknown mode 'bicubic'"));
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace tuner::onnx_tests

namespace tuner::onnx_tests {
namespace {

// Recurrent layers in the forms the node tests lack (both directions, reverse, clip, GRU's
// linear_before_reset, batch-first layout, per-direction activations) against ONNX's
// equations written out as plain loops in double.
struct Recurrent {
  std::string op;  // RNN, GRU, LSTM
  std::string direction = "forward";
  double clip = 0;
  int64_t linear_before_reset = 0, layout = 0;
  std::vector<std::string> activations{};  // empty: the defaults
  float leaky_alpha = 0;                  // activation_alpha = {it} when set (one LeakyRelu)
  int64_t T = 3, B = 2, I = 3, H = 4;
  int64_t gates() const { return op == "RNN" ? 1 : op == "GRU" ? 3 : 4; }
  int64_t dirs() const { return direction == "bidirectional" ? 2 : 1; }
};

double act(const std::string& name, double v, double leaky_alpha) {
  if (name == "Sigmoid") return 1 / (1 + std::exp(-v));
  if (name == "Relu") return std::max(v, 0.0);
  if (name == "LeakyRelu") return v < 0 ? leaky_alpha * v : v;
  return std::tanh(v);
}

// Outputs Y, Y_h (, Y_c) for inputs X, W, R, B, initial_h (, initial_c, P), layout 0 or 1.
std::vector<std::vector<double>> recurrent_reference(const Recurrent& c, const std::vector<HostTensor>& in) {
  int64_t T = c.T, Bt = c.B, I = c.I, H = c.H, G = c.gates(), D = c.dirs();
  bool bf = c.layout == 1;
  auto X = [&](int64_t t, int64_t b, int64_t i) { return in[0].get(bf ? (b * T + t) * I + i : (t * Bt + b) * I + i); };
  auto W = [&](int64_t d, int64_t j, int64_t i) { return in[1].get((d * G * H + j) * I + i); };
  auto R = [&](int64_t d, int64_t j, int64_t k) { return in[2].get((d * G * H + j) * H + k); };
  auto Bias = [&](int64_t d, int64_t j) { return in[3].get(d * 2 * G * H + j); };
  auto init = [&](size_t which, int64_t d, int64_t b, int64_t k) {
    return in[which].get(bf ? (b * D + d) * H + k : (d * Bt + b) * H + k);
  };
  std::vector<std::string> names = c.activations;
  std::vector<std::string> defaults = c.op == "RNN" ? std::vector<std::string>{"Tanh"}
                                      : c.op == "GRU" ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                      : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  if (names.empty())
    for (int64_t d = 0; d < D; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  int64_t per = int64_t(defaults.size());
  double leaky = c.leaky_alpha > 0 ? double(c.leaky_alpha) : 0.01;
  auto clip = [&](double v) { return c.clip > 0 ? std::min(std::max(v, -c.clip), c.clip) : v; };
  std::vector<double> Y(size_t(T * D * Bt * H)), Yh(size_t(D * Bt * H)), Yc(size_t(D * Bt * H));
  for (int64_t d = 0; d < D; ++d) {
    const std::string& f = names[size_t(d * per)];
    const std::string& g = names[size_t(d * per + (per > 1 ? 1 : 0))];
    const std::string& hact = names[size_t(d * per + per - 1)];
    std::vector<double> h(size_t(Bt * H)), cell(size_t(Bt * H));
    for (int64_t b = 0; b < Bt; ++b)
      for (int64_t k = 0; k < H; ++k) {
        h[size_t(b * H + k)] = init(4, d, b, k);
        if (c.op == "LSTM") cell[size_t(b * H + k)] = init(5, d, b, k);
      }
    for (int64_t s = 0; s < T; ++s) {
      int64_t t = (d == 1 || c.direction == "reverse") ? T - 1 - s : s;
      std::vector<double> nh(h.size()), nc(cell.size());
      for (int64_t b = 0; b < Bt; ++b) {
        // pre[j] = x W + h R + Wb + Rb for every gate unit j; xw and hr kept apart for GRU.
        std::vector<double> xw(size_t(G * H)), hr(size_t(G * H));
        for (int64_t j = 0; j < G * H; ++j) {
          for (int64_t i = 0; i < I; ++i) xw[size_t(j)] += X(t, b, i) * W(d, j, i);
          for (int64_t k = 0; k < H; ++k) hr[size_t(j)] += h[size_t(b * H + k)] * R(d, j, k);
          xw[size_t(j)] += Bias(d, j);
          hr[size_t(j)] += Bias(d, G * H + j);
        }
        for (int64_t u = 0; u < H; ++u) {
          size_t o = size_t(b * H + u);
          auto pre = [&](int64_t k) { return xw[size_t(k * H + u)] + hr[size_t(k * H + u)]; };
          if (c.op == "RNN") {
            nh[o] = act(f, clip(pre(0)), leaky);
          } else if (c.op == "GRU") {
            double z = act(f, clip(pre(0)), leaky);
            double hh;
            if (c.linear_before_reset) {
              hh = act(g, clip(xw[size_t(2 * H + u)] + act(f, clip(pre(1)), leaky) * hr[size_t(2 * H + u)]), leaky);
            } else {
              double rh = Bias(d, G * H + 2 * H + u);
              for (int64_t k = 0; k < H; ++k) {
                double r = act(f, clip(xw[size_t(H + k)] + hr[size_t(H + k)]), leaky);
                rh += r * h[size_t(b * H + k)] * R(d, 2 * H + u, k);
              }
              hh = act(g, clip(xw[size_t(2 * H + u)] + rh), leaky);
            }
            nh[o] = (1 - z) * hh + z * h[o];
          } else {
            auto P = [&](int64_t k) { return in[6].get(d * 3 * H + k * H + u); };  // i, o, f
            double i = act(f, clip(pre(0) + P(0) * cell[o]), leaky), fg = act(f, clip(pre(2) + P(2) * cell[o]), leaky);
            nc[o] = fg * cell[o] + i * act(g, clip(pre(3)), leaky);
            nh[o] = act(f, clip(pre(1) + P(1) * nc[o]), leaky) * act(hact, nc[o], leaky);
          }
        }
      }
      h = nh;
      if (c.op == "LSTM") cell = nc;
      for (int64_t b = 0; b < Bt; ++b)
        for (int64_t k = 0; k < H; ++k)
          Y[size_t(bf ? ((b * T + t) * D + d) * H + k : ((t * D + d) * Bt + b) * H + k)] = h[size_t(b * H + k)];
    }
    for (int64_t b = 0; b < Bt; ++b)
      for (int64_t k = 0; k < H; ++k) {
        size_t at = size_t(bf ? (b * D + d) * H + k : (d * Bt + b) * H + k);
        Yh[at] = h[size_t(b * H + k)];
        Yc[at] = cell[size_t(b * H + k)];
      }
  }
  if (c.op == "LSTM") return {Y, Yh, Yc};
  return {Y, Yh};
}

TEST(GraphModels, RecurrentLayersInEveryDirectionAndLayout) {
  std::vector<Recurrent> cases;
  auto add = [&](Recurrent r) { cases.push_back(std::move(r)); };
  add({.op = "LSTM", .direction = "bidirectional", .clip = 0.9});
  add({.op = "LSTM", .direction = "reverse", .layout = 1});
  add({.op = "GRU", .direction = "reverse", .linear_before_reset = 1});
  add({.op = "GRU", .direction = "bidirectional", .clip = 0.7, .layout = 1});
  add({.op = "RNN", .direction = "bidirectional", .activations = {"Relu", "Tanh"}});
  // activation_alpha goes to the activations that take one, in order (as ONNX Runtime reads it).
  add({.op = "LSTM", .activations = {"Sigmoid", "LeakyRelu", "Tanh"}, .leaky_alpha = 0.3f});
  for (const Recurrent& c : cases) {
    SCOPED_TRACE(c.op + " " + c.direction + " layout " + std::to_string(c.layout));
    int64_t G = c.gates(), D = c.dirs();
    bool bf = c.layout == 1;
    ModelBuilder b(14);
    std::vector<int64_t> xs = bf ? std::vector<int64_t>{c.B, c.T, c.I} : std::vector<int64_t>{c.T, c.B, c.I};
    std::vector<int64_t> hs = bf ? std::vector<int64_t>{c.B, D, c.H} : std::vector<int64_t>{D, c.B, c.H};
    std::vector<std::vector<int64_t>> shapes = {xs, {D, G * c.H, c.I}, {D, G * c.H, c.H}, {D, 2 * G * c.H}, hs};
    std::vector<std::string> names = {"X", "W", "R", "B", "initial_h"};
    if (c.op == "LSTM") {
      shapes.push_back(hs);
      shapes.push_back({D, 3 * c.H});
      names.insert(names.end(), {"initial_c", "P"});
    }
    for (size_t i = 0; i < names.size(); ++i) b.input(names[i], shapes[i]);
    std::vector<std::string> ins = {"X", "W", "R", "B", "", "initial_h"};
    if (c.op == "LSTM") ins.insert(ins.end(), {"initial_c", "P"});
    std::vector<std::string> outs = {"Y", "Y_h"};
    b.output("Y", bf ? std::vector<int64_t>{c.B, c.T, D, c.H} : std::vector<int64_t>{c.T, D, c.B, c.H});
    b.output("Y_h", hs);
    if (c.op == "LSTM") {
      outs.push_back("Y_c");
      b.output("Y_c", hs);
    }
    onnx::NodeProto& n = b.node(c.op, ins, outs);
    set_int(n, "hidden_size", c.H);
    set_string(n, "direction", c.direction);
    if (c.layout) set_int(n, "layout", c.layout);
    if (c.linear_before_reset) set_int(n, "linear_before_reset", 1);
    if (c.clip > 0) {
      auto* a = n.add_attribute();
      a->set_name("clip");
      a->set_type(onnx::AttributeProto::FLOAT);
      a->set_f(float(c.clip));
    }
    if (!c.activations.empty()) {
      auto* a = n.add_attribute();
      a->set_name("activations");
      a->set_type(onnx::AttributeProto::STRINGS);
      for (const auto& s : c.activations) a->add_strings(s);
    }
    if (c.leaky_alpha > 0) {
      auto* a = n.add_attribute();
      a->set_name("activation_alpha");
      a->set_type(onnx::AttributeProto::FLOATS);
      a->add_floats(c.leaky_alpha);
    }
    graph::Graph g = b.import();
    Rng rng(11);
    std::vector<HostTensor> in;
    for (const auto& s : shapes) in.push_back(HostTensor::random(s, te::DataType::f32(), rng));
    Recurrent exact = c;
    exact.clip = c.clip > 0 ? double(float(c.clip)) : 0;
    expect_outputs(g, in, recurrent_reference(exact, in));
  }
}

// Shorter sequences per batch entry are not supported: one clear error naming the node.
TEST(GraphModels, RecurrentSequenceLensShorterThanTheSequenceIsAnError) {
  ModelBuilder b(14);
  b.input("X", {3, 2, 3});
  b.input("W", {1, 4, 3});
  b.input("R", {1, 4, 4});
  b.output("Y", {3, 1, 2, 4});
  onnx::TensorProto* t = b.model().mutable_graph()->add_initializer();
  t->set_name("lens");
  t->set_data_type(onnx::TensorProto::INT32);
  t->add_dims(2);
  t->add_int32_data(3);
  t->add_int32_data(2);
  set_int(b.node("RNN", {"X", "W", "R", "", "lens"}, {"Y"}), "hidden_size", 4);
  EXPECT_THAT([&] { b.import(); },
              testing::ThrowsMessage<UserError>(testing::HasSubstr("sequence_lens shorter than the sequence")));
}

// Float Mod (fmod = 1) is C's fmod, exact for any quotient (a - b * trunc(a / b) in float gave
// fmod(1e20, 3) = 2.2e12); integer Pow computes in double, as ONNX Runtime does (float32 gave
// 3^19 = 1162261504). Interpreted and compiled, compared exactly.
TEST(GraphModels, FloatModAndIntegerPowAreExact) {
  ModelBuilder b(13);
  b.input("a", {8});
  b.input("b", {8});
  b.input("base", {5}, onnx::TensorProto::INT32);
  b.input("exp", {5}, onnx::TensorProto::INT32);
  b.output("mod", {8});
  b.output("pow", {5}, onnx::TensorProto::INT32);
  set_int(b.node("Mod", {"a", "b"}, {"mod"}), "fmod", 1);
  b.node("Pow", {"base", "exp"}, {"pow"});
  graph::Graph g = b.import();
  std::vector<double> a = {1e20, 1e10, -3e9, 1e38, 7, 5.5, -5.5, 0},
                      bv = {3, 3, 7, 3.5, 1e-7, 2, 2, 3};
  std::vector<HostTensor> in = {
      floats({8}, a), floats({8}, bv),
      HostTensor::from_values({5}, te::DataType::i32(), {3, 7, 46340, 2, -3}),
      HostTensor::from_values({5}, te::DataType::i32(), {19, 11, 2, -1, 3})};
  const std::vector<int64_t> pow_want = {1162261467, 1977326743, 2147395600, 0, -27};
  for (const char* how : {"interpreted", "compiled"}) {
    std::vector<HostTensor> out =
        std::string(how) == "compiled" ? run_compiled(g, in) : graph::evaluate_graph(g, in);
    for (size_t i = 0; i < a.size(); ++i)
      EXPECT_EQ(out[0].get(int64_t(i)), double(std::fmod(float(a[i]), float(bv[i]))))
          << how << ": fmod(" << a[i] << ", " << bv[i] << ")";
    for (size_t i = 0; i < pow_want.size(); ++i)
      EXPECT_EQ(out[1].get_int(int64_t(i)), pow_want[i]) << how << ": pow element " << i;
  }
}

// Opset 18 Pad's pads follow its axes input in the order listed (they were applied in sorted
// axis order: [2, 0] padded axis 0 as axis 2's).
TEST(GraphModels, Pad18AxesInTheirListedOrder) {
  ModelBuilder b(18);
  b.input("x", {2, 3, 4});
  b.output("y", {7, 3, 5});
  b.initializer("pads", {4}, {1, 2, 0, 3});  // begins of axes 2, 0; then their ends
  b.initializer("axes", {2}, {2, 0});
  b.node("Pad", {"x", "pads", "", "axes"}, {"y"});
  graph::Graph g = b.import();
  std::vector<HostTensor> out = graph::evaluate_graph(g, {iota({2, 3, 4})});
  ASSERT_EQ(out[0].shape, (ops::Shape{7, 3, 5}));
  // x[i][j][k] = 12 i + 4 j + k lands at [i + 2][j][k + 1]; the rest is padding.
  EXPECT_EQ(out[0].get((2 * 3 + 1) * 5 + 3), 6);   // x[0][1][2]
  EXPECT_EQ(out[0].get((3 * 3 + 2) * 5 + 4), 23);  // x[1][2][3]
  EXPECT_EQ(out[0].get((3 * 3 + 2) * 5 + 0), 0);
  EXPECT_EQ(out[0].get((1 * 3 + 1) * 5 + 2), 0);
}

// int64 constants above 2^53 stay exact (they went through a double: 2^53 + 1 became 2^53):
// Clip's bound, Pad's value, ConstantOfShape's value and Range's length.
TEST(GraphModels, Int64ConstantsAbove2To53AreExact) {
  const int64_t big = (int64_t(1) << 53) + 1;
  ModelBuilder b(13);
  b.input("x", {2}, onnx::TensorProto::INT64);
  b.output("clip", {2}, onnx::TensorProto::INT64);
  b.output("pad", {3}, onnx::TensorProto::INT64);
  b.output("fill", {2}, onnx::TensorProto::INT64);
  b.output("range", {3}, onnx::TensorProto::INT64);
  b.initializer("hi", {}, {big});
  b.initializer("pads", {2}, {1, 0});
  b.initializer("fill_shape", {1}, {2});
  b.initializer("start", {}, {big});
  b.initializer("limit", {}, {big + 3});
  b.initializer("delta", {}, {1});
  b.node("Clip", {"x", "", "hi"}, {"clip"});
  b.node("Pad", {"x", "pads", "hi"}, {"pad"});
  auto& fill = b.node("ConstantOfShape", {"fill_shape"}, {"fill"});
  auto* value = fill.add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  value->mutable_t()->add_dims(1);
  value->mutable_t()->add_int64_data(big);
  b.node("Range", {"start", "limit", "delta"}, {"range"});
  graph::Graph g = b.import();
  HostTensor x({2}, te::DataType::i64());
  x.set_int(0, big + 2);
  x.set_int(1, big);
  for (const char* how : {"interpreted", "compiled"}) {
    std::vector<HostTensor> out =
        std::string(how) == "compiled" ? run_compiled(g, {x}) : graph::evaluate_graph(g, {x});
    auto ints = [](const HostTensor& t) {
      std::vector<int64_t> v;
      for (int64_t i = 0; i < t.num_elements(); ++i) v.push_back(t.get_int(i));
      return v;
    };
    EXPECT_EQ(ints(out[0]), (std::vector<int64_t>{big, big})) << how;
    EXPECT_EQ(ints(out[1]), (std::vector<int64_t>{big, big + 2, big})) << how;
    EXPECT_EQ(ints(out[2]), (std::vector<int64_t>{big, big})) << how;
    EXPECT_EQ(ints(out[3]), (std::vector<int64_t>{big, big + 1, big + 2})) << how;
  }
}

}  // namespace
}  // namespace tuner::onnx_tests
