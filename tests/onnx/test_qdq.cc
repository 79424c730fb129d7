// QDQ models as ONNX Runtime runs them (graph::qdq_to_qlinear): a QuantizeLinear of a Conv,
// Gemm or Add of DequantizeLinears becomes QLinearConv / QGemm / QLinearAdd, and computes exactly what the
// same model written with those operators computes (checked against ONNX Runtime in
// test_integer_ops.cc), not the float reference.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "graph/evaluate.h"
#include "graph/passes.h"
#include "onnx/model_builder.h"
#include "onnx/node_harness.h"

namespace tuner::onnx_tests {
namespace {

constexpr int kQdqU8 = onnx::TensorProto::UINT8, kQdqI8 = onnx::TensorProto::INT8;
constexpr int kQdqI32 = onnx::TensorProto::INT32;

// The quantization parameters and weights both forms share: x [1, 8, 7, 7] uint8 (scale
// 0.03, zero point 120), w [32, 8, 3, 3] int8 per output channel, bias int32, y uint8 (0.2,
// 90), a second input r [1, 32, 7, 7] uint8 (0.05, 128) and their sum z uint8 (0.25, 100).
void float_scalar(ModelBuilder& b, const std::string& name, float v) {
  onnx::TensorProto* t = b.model().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_float_data(v);
}

void add_parameters(ModelBuilder& b) {
  float_scalar(b, "xs", 0.03f);
  b.int_initializer("xz", kQdqU8, {}, {120});
  std::vector<int64_t> w, bias;
  for (int i = 0; i < 32 * 8 * 9; ++i) w.push_back((i * 37 + 5) % 255 - 127);
  b.int_initializer("wq", kQdqI8, {32, 8, 3, 3}, w);
  std::vector<float> ws, bs;
  for (int m = 0; m < 32; ++m) {
    ws.push_back(0.001f * float(1 + m % 5));
    bs.push_back(0.03f * ws.back());
    bias.push_back(m * 97 - 1500);
  }
  b.float_initializer("ws", ws);
  b.int_initializer("wz", kQdqI8, {32}, std::vector<int64_t>(32, 0));
  b.int_initializer("bq", kQdqI32, {32}, bias);
  b.float_initializer("bs", bs);
  float_scalar(b, "ys", 0.2f);
  b.int_initializer("yz", kQdqU8, {}, {90});
  float_scalar(b, "rs", 0.05f);
  b.int_initializer("rz", kQdqU8, {}, {128});
  float_scalar(b, "zs", 0.25f);
  b.int_initializer("zz", kQdqU8, {}, {100});
}

// The two models' inputs x, r, output z and parameters.
void add_io_and_parameters(ModelBuilder& b) {
  b.input("x", {1, 8, 7, 7}, kQdqU8);
  b.input("r", {1, 32, 7, 7}, kQdqU8);
  b.output("z", {1, 32, 7, 7}, kQdqU8);
  add_parameters(b);
}

graph::Graph qdq_model() {
  ModelBuilder b(13);
  add_io_and_parameters(b);
  b.node("DequantizeLinear", {"x", "xs", "xz"}, {"xf"});
  set_int(b.node("DequantizeLinear", {"wq", "ws", "wz"}, {"wf"}), "axis", 0);
  set_int(b.node("DequantizeLinear", {"bq", "bs"}, {"bf"}), "axis", 0);
  set_ints(b.node("Conv", {"xf", "wf", "bf"}, {"yf"}), "pads", {1, 1, 1, 1});
  b.node("QuantizeLinear", {"yf", "ys", "yz"}, {"y"});
  b.node("DequantizeLinear", {"y", "ys", "yz"}, {"yd"});
  b.node("DequantizeLinear", {"r", "rs", "rz"}, {"rd"});
  b.node("Add", {"yd", "rd"}, {"sum"});
  b.node("QuantizeLinear", {"sum", "zs", "zz"}, {"z"});
  return b.import();
}

graph::Graph qoperator_model() {
  ModelBuilder b(13);
  add_io_and_parameters(b);
  set_ints(b.node("QLinearConv", {"x", "xs", "xz", "wq", "ws", "wz", "ys", "yz", "bq"}, {"y"}), "pads", {1, 1, 1, 1});
  auto* o = b.model().add_opset_import();
  o->set_domain("com.microsoft");
  o->set_version(1);
  b.node("QLinearAdd", {"y", "ys", "yz", "r", "rs", "rz", "zs", "zz"}, {"z"}).set_domain("com.microsoft");
  return b.import();
}

std::vector<HostTensor> qdq_inputs() {
  std::vector<double> x, r;
  for (int i = 0; i < 8 * 49; ++i) x.push_back((i * 53 + 3) % 256);
  for (int i = 0; i < 32 * 49; ++i) r.push_back((i * 29 + 11) % 256);
  return {HostTensor::from_values({1, 8, 7, 7}, te::DataType::u8(), x),
          HostTensor::from_values({1, 32, 7, 7}, te::DataType::u8(), r)};
}

TEST(Qdq, ConvAndAddRunAsTheirIntegerOperators) {
  graph::Graph g = qdq_model();
  std::vector<HostTensor> in = qdq_inputs();
  std::vector<double> want = values(graph::evaluate_graph(qoperator_model(), in)[0]);

  graph::Graph rewritten = g;
  graph::run_passes(rewritten);
  std::vector<std::string> ops;
  for (const graph::Node& n : rewritten.nodes) ops.push_back(n.op);
  EXPECT_EQ(ops, (std::vector<std::string>{"QLinearConv", "com.microsoft.QLinearAdd"}));
  EXPECT_EQ(values(graph::evaluate_graph(rewritten, in)[0]), want) << "interpreted";
  EXPECT_EQ(values(run_compiled(g, in)[0]), want) << "compiled";
}

// A classifier: QuantizeLinear(Gemm(DQ(a), DQ(B) per output row, DQ(bias)), transB) is ONNX
// Runtime's QGemm; with beta 2 (the bias scaled) it keeps the float form.
TEST(Qdq, GemmRunsAsQGemm) {
  for (float beta : {1.0f, 2.0f}) {
    auto model = [&](bool qdq) {
      ModelBuilder b(13);
      b.input("a", {2, 24}, kQdqU8);
      b.output("y", {2, 16}, kQdqU8);
      float_scalar(b, "as", 0.03f);
      b.int_initializer("az", kQdqU8, {}, {120});
      std::vector<int64_t> w, bias;
      std::vector<float> ws, bs;
      for (int i = 0; i < 16 * 24; ++i) w.push_back((i * 37 + 5) % 255 - 127);
      for (int m = 0; m < 16; ++m) {
        ws.push_back(0.002f * float(1 + m % 5));
        bs.push_back(0.03f * ws.back());
        bias.push_back(m * 97 - 700);
      }
      b.int_initializer("wq", kQdqI8, {16, 24}, w);
      b.float_initializer("ws", ws);
      b.int_initializer("wz", kQdqI8, {16}, std::vector<int64_t>(16, 0));
      b.int_initializer("bq", kQdqI32, {16}, bias);
      b.float_initializer("bs", bs);
      float_scalar(b, "ys", 0.1f);
      b.int_initializer("yz", kQdqU8, {}, {60});
      if (!qdq) {
        auto* o = b.model().add_opset_import();
        o->set_domain("com.microsoft");
        o->set_version(1);
        auto& n = b.node("QGemm", {"a", "as", "az", "wq", "ws", "wz", "bq", "ys", "yz"}, {"y"});
        n.set_domain("com.microsoft");
        set_int(n, "transB", 1);
        return b.import();
      }
      b.node("DequantizeLinear", {"a", "as", "az"}, {"af"});
      set_int(b.node("DequantizeLinear", {"wq", "ws", "wz"}, {"wf"}), "axis", 0);
      set_int(b.node("DequantizeLinear", {"bq", "bs"}, {"bf"}), "axis", 0);
      auto& gemm = b.node("Gemm", {"af", "wf", "bf"}, {"yf"});
      set_int(gemm, "transB", 1);
      set_float(gemm, "beta", beta);
      b.node("QuantizeLinear", {"yf", "ys", "yz"}, {"y"});
      return b.import();
    };
    graph::Graph g = model(true);
    graph::Graph rewritten = g;
    graph::run_passes(rewritten);
    int qgemms = 0;
    for (const graph::Node& n : rewritten.nodes) qgemms += !n.dead && n.op == "com.microsoft.QGemm";
    EXPECT_EQ(qgemms, beta == 1.0f ? 1 : 0) << "beta " << beta;
    if (beta != 1.0f) continue;
    std::vector<double> a;
    for (int i = 0; i < 2 * 24; ++i) a.push_back((i * 53 + 3) % 256);
    std::vector<HostTensor> in = {HostTensor::from_values({2, 24}, te::DataType::u8(), a)};
    std::vector<double> want = values(graph::evaluate_graph(model(false), in)[0]);
    EXPECT_EQ(values(graph::evaluate_graph(rewritten, in)[0]), want) << "interpreted";
    EXPECT_EQ(values(run_compiled(g, in)[0]), want) << "compiled";
  }
}

// Q(MaxPool(DQ(x))) of one scale and zero point pools the bytes (padded, strided: the pad
// never wins); of another output scale it keeps the float form.
TEST(Qdq, MaxPoolOfOneScalePoolsTheBytes) {
  for (float out_scale : {0.03f, 0.05f}) {
    ModelBuilder b(13);
    b.input("x", {1, 3, 9, 9}, kQdqU8);
    b.output("y", {1, 3, 5, 5}, kQdqU8);
    float_scalar(b, "xs", 0.03f);
    b.int_initializer("xz", kQdqU8, {}, {120});
    float_scalar(b, "ys", out_scale);
    b.int_initializer("yz", kQdqU8, {}, {120});
    b.node("DequantizeLinear", {"x", "xs", "xz"}, {"xf"});
    auto& pool = b.node("MaxPool", {"xf"}, {"pf"});
    set_ints(pool, "kernel_shape", {3, 3});
    set_ints(pool, "strides", {2, 2});
    set_ints(pool, "pads", {1, 1, 1, 1});
    b.node("QuantizeLinear", {"pf", "ys", "yz"}, {"y"});
    graph::Graph g = b.import();
    std::vector<double> x;
    for (int i = 0; i < 3 * 81; ++i) x.push_back((i * 53 + 3) % 256);
    std::vector<HostTensor> in = {HostTensor::from_values({1, 3, 9, 9}, te::DataType::u8(), x)};
    std::vector<double> want = values(graph::evaluate_graph(g, in)[0]);
    graph::Graph rewritten = g;
    graph::run_passes(rewritten);
    std::vector<std::string> ops;
    for (const graph::Node& n : rewritten.nodes)
      if (!n.dead) ops.push_back(n.op);
    if (out_scale == 0.03f)
      EXPECT_EQ(ops, std::vector<std::string>{"MaxPool"});
    else
      EXPECT_EQ(ops, (std::vector<std::string>{"DequantizeLinear", "MaxPool", "QuantizeLinear"}));
    EXPECT_EQ(values(graph::evaluate_graph(rewritten, in)[0]), want) << "interpreted, scale " << out_scale;
    EXPECT_EQ(values(run_compiled(g, in)[0]), want) << "compiled, scale " << out_scale;
  }
}

// A bias whose scale is not x_scale x w_scale, or a sum read by more than its QuantizeLinear,
// keeps the float form.
TEST(Qdq, OtherScalesOrReadersKeepTheFloatForm) {
  for (const char* change : {"bias_scale", "second_reader"}) {
    ModelBuilder b(13);
    b.input("x", {1, 8, 7, 7}, kQdqU8);
    b.output("y", {1, 32, 7, 7}, kQdqU8);
    add_parameters(b);
    b.float_initializer("bs2", std::vector<float>(32, 0.5f));
    b.node("DequantizeLinear", {"x", "xs", "xz"}, {"xf"});
    set_int(b.node("DequantizeLinear", {"wq", "ws", "wz"}, {"wf"}), "axis", 0);
    bool bias_scale = std::string(change) == "bias_scale";
    set_int(b.node("DequantizeLinear", {"bq", bias_scale ? "bs2" : "bs"}, {"bf"}), "axis", 0);
    set_ints(b.node("Conv", {"xf", "wf", "bf"}, {"yf"}), "pads", {1, 1, 1, 1});
    b.node("QuantizeLinear", {"yf", "ys", "yz"}, {"y"});
    if (!bias_scale) {
      b.output("yf", {1, 32, 7, 7});
    }
    graph::Graph g = b.import();
    graph::run_passes(g);
    int convs = 0;
    for (const graph::Node& n : g.nodes) convs += n.op == "Conv";
    EXPECT_EQ(convs, 1) << change;
  }
}

}  // namespace
}  // namespace tuner::onnx_tests
