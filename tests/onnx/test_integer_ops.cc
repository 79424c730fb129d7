// The integer operators of quantized models (QLinearConv, ConvInteger, QLinearMatMul, and
// ONNX Runtime's QLinearAdd, QLinearGlobalAveragePool and QGemm): int32 sums requantized as
// ONNX Runtime does, so the expected values are onnxruntime 1.32's outputs for the same
// models, exactly.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "codegen/target.h"
#include "compile/compile_model.h"
#include "graph/evaluate.h"
#include "graph/fusion.h"
#include "graph/onnx_import.h"
#include "graph/passes.h"
#include "onnx/model_builder.h"
#include "onnx/node_harness.h"

namespace tuner::onnx_tests {
namespace {

using ::testing::HasSubstr;
constexpr int kU8 = onnx::TensorProto::UINT8, kI8 = onnx::TensorProto::INT8;

const std::vector<double> kImage = {10, 200, 30, 40, 50, 250, 70, 80, 90,
                                    0,  255, 128, 1, 2, 3,   64, 32, 16};

// g after the passes, with AVX-512's layouts (16 lanes, 32 registers).
graph::Graph with_avx512_layouts(graph::Graph g) {
  graph::PassOptions opts;
  opts.vector_lanes = 16, opts.vector_registers = 32;
  graph::run_passes(g, opts);
  return g;
}

// Two groups of one channel, 2x2 kernels, padded at the bottom and right.
void add_grouped_conv(ModelBuilder& b, const char* op, std::vector<std::string> inputs) {
  b.input("x", {1, 2, 3, 3}, kU8);
  b.int_initializer("w", kI8, {2, 1, 2, 2}, {1, -2, 3, -4, -128, 127, 5, 6});
  auto& n = b.node(op, inputs, {"y"});
  set_ints(n, "pads", {0, 0, 1, 1});
  set_int(n, "group", 2);
}

TEST(IntegerOps, QLinearConvPerChannelWeightsAndBias) {
  ModelBuilder b(13);
  add_grouped_conv(b, "QLinearConv", {"x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "bias"});
  b.output("y", {1, 2, 3, 3}, kU8);
  b.float_initializer("xs", {0.1f}, {});
  b.int_initializer("xz", kU8, {}, {128});
  b.float_initializer("ws", {0.05f, 0.002f});
  b.int_initializer("wz", kI8, {2}, {0, 0});
  b.float_initializer("ys", {0.25f}, {});
  b.int_initializer("yz", kU8, {}, {10});
  b.int_initializer("bias", onnx::TensorProto::INT32, {2}, {100, -50});
  HostTensor x = HostTensor::from_values({1, 2, 3, 3}, te::DataType::u8(), kImage);
  expect_outputs(b.import(), {x}, {{8, 3, 17, 14, 6, 12, 13, 13, 11, 35, 0, 9, 9, 9, 22, 7, 8, 21}});
}

TEST(IntegerOps, ConvIntegerSubtractsTheZeroPoint) {
  ModelBuilder b(13);
  add_grouped_conv(b, "ConvInteger", {"x", "w", "xz"});
  b.output("y", {1, 2, 3, 3}, onnx::TensorProto::INT32);
  b.int_initializer("xz", kU8, {}, {128});
  HostTensor x = HostTensor::from_values({1, 2, 3, 3}, te::DataType::u8(), kImage);
  expect_outputs(b.import(), {x},
                 {{-214, -454, 268, 86, -314, 8, 38, 28, -38, 31122, -17636, -625, -642, -899, 15440,
                   -4000, -1936, 14336}});
}

// B's scale per column; the outputs saturate at both ends of uint8.
TEST(IntegerOps, QLinearMatMulPerColumnScaleSaturates) {
  ModelBuilder b(13);
  b.input("a", {2, 3}, kU8);
  b.output("y", {2, 2}, kU8);
  b.float_initializer("as", {0.5f}, {});
  b.int_initializer("az", kU8, {}, {128});
  b.int_initializer("b", kI8, {3, 2}, {1, -1, 127, -128, 0, 5});
  b.float_initializer("bs", {0.01f, 0.02f});
  b.int_initializer("bz", kI8, {2}, {0, 0});
  b.float_initializer("ys", {0.3f}, {});
  b.int_initializer("yz", kU8, {}, {100});
  b.node("QLinearMatMul", {"a", "as", "az", "b", "bs", "bz", "ys", "yz"}, {"y"});
  HostTensor a = HostTensor::from_values({2, 3}, te::DataType::u8(), {1, 2, 3, 250, 128, 0});
  expect_outputs(b.import(), {a}, {{0, 255, 102, 75}});
}

TEST(IntegerOps, MismatchedZeroPointsAreRefused) {
  ModelBuilder b(13);
  add_grouped_conv(b, "ConvInteger", {"x", "w", "xz"});
  b.output("y", {1, 2, 3, 3}, onnx::TensorProto::INT32);
  b.int_initializer("xz", kU8, {2}, {1, 2});  // x's zero point must be a scalar
  EXPECT_THAT(b.import_error(), HasSubstr("x's zero point must be a scalar"));
}

// With 32 output channels the weights are packed (centred on their per-channel zero points,
// in int32) and the conv vectorizes over output channels: compiled as interpreted (the
// interpreter runs ONNX's layouts, checked against ONNX Runtime above).
TEST(IntegerOps, PackedQLinearConvComputesAsUnpacked) {
  ModelBuilder b(13);
  b.input("x", {1, 8, 6, 6}, kU8);
  b.output("y", {1, 32, 6, 6}, kU8);
  std::vector<int64_t> w, wz;
  for (int i = 0; i < 32 * 8 * 9; ++i) w.push_back((i * 37) % 256 - 128);
  for (int m = 0; m < 32; ++m) wz.push_back(m % 5 - 2);
  b.int_initializer("w", kI8, {32, 8, 3, 3}, w);
  b.int_initializer("wz", kI8, {32}, wz);
  b.float_initializer("xs", {0.02f}, {});
  b.int_initializer("xz", kU8, {}, {120});
  std::vector<float> ws;
  for (int m = 0; m < 32; ++m) ws.push_back(0.001f * float(1 + m % 7));
  b.float_initializer("ws", ws);
  b.float_initializer("ys", {0.2f}, {});
  b.int_initializer("yz", kU8, {}, {128});
  set_ints(b.node("QLinearConv", {"x", "xs", "xz", "w", "ws", "wz", "ys", "yz"}, {"y"}), "pads", {1, 1, 1, 1});
  graph::Graph g = b.import();
  graph::Graph packed = with_avx512_layouts(g);
  bool found = false;
  for (const graph::Node& n : packed.nodes)
    if (n.op == "QLinearConv") {
      const graph::Value& pw = packed.values[size_t(n.inputs[3])];
      found = pw.dtype == te::DataType::i32() && pw.shape.size() == 5 && n.inputs[5] < 0;
    }
  EXPECT_TRUE(found) << "the weights were not packed";
  std::vector<double> x;
  for (int i = 0; i < 8 * 36; ++i) x.push_back((i * 53) % 256);
  expect_compiled_as_interpreted(g, {HostTensor::from_values({1, 8, 6, 6}, te::DataType::u8(), x)});
}

// B of 32 columns packs into panels centred on its per-column zero point (in int32), for
// MatMulInteger and QLinearMatMul alike: compiled as interpreted.
TEST(IntegerOps, PackedIntegerMatMulsComputeAsUnpacked) {
  for (const char* op : {"MatMulInteger", "QLinearMatMul"}) {
    bool q = std::string(op) == "QLinearMatMul";
    ModelBuilder b(13);
    b.input("a", {3, 5}, kU8);
    b.output("y", {3, 32}, q ? kU8 : int(onnx::TensorProto::INT32));
    std::vector<int64_t> w, wz;
    for (int i = 0; i < 5 * 32; ++i) w.push_back((i * 41) % 256 - 128);
    for (int n = 0; n < 32; ++n) wz.push_back(n % 3 - 1);
    b.int_initializer("b", kI8, {5, 32}, w);
    b.int_initializer("bz", kI8, {32}, wz);
    b.int_initializer("az", kU8, {}, {100});
    b.float_initializer("as", {0.05f}, {});
    b.float_initializer("bs", {0.02f}, {});
    b.float_initializer("ys", {0.5f}, {});
    b.int_initializer("yz", kU8, {}, {128});
    if (q)
      b.node(op, {"a", "as", "az", "b", "bs", "bz", "ys", "yz"}, {"y"});
    else
      b.node(op, {"a", "b", "az", "bz"}, {"y"});
    graph::Graph g = b.import();
    graph::Graph packed = with_avx512_layouts(g);
    size_t bi = q ? 3 : 1;
    bool found = false;
    for (const graph::Node& n : packed.nodes)
      if (n.op == op) found = packed.values[size_t(n.inputs[bi])].shape == ops::Shape{1, 5, 32} && n.inputs[bi + 2] < 0;
    EXPECT_TRUE(found) << op << ": B was not packed";
    std::vector<double> a;
    for (int i = 0; i < 15; ++i) a.push_back((i * 67) % 256);
    SCOPED_TRACE(op);
    expect_compiled_as_interpreted(g, {HostTensor::from_values({3, 5}, te::DataType::u8(), a)});
  }
}

// A weight of `shape` with values across int8.
void int8_weight(ModelBuilder& b, const std::string& name, const ops::Shape& shape) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  std::vector<int64_t> w;
  for (int64_t i = 0; i < count; ++i) w.push_back((i * 37 + 11) % 255 - 127);
  b.int_initializer(name, kI8, shape, w);
}

// A scalar scale `<p>s` and zero point `<p>z` (of `zp_type`).
void quantization(ModelBuilder& b, const std::string& p, float scale, int64_t zero_point, int zp_type = kU8) {
  b.float_initializer(p + "s", {scale}, {});
  b.int_initializer(p + "z", zp_type, {}, {zero_point});
}

// A node of ONNX Runtime's com.microsoft domain, which the model then imports.
onnx::NodeProto& ort_node(ModelBuilder& b, const char* op, const std::vector<std::string>& inputs,
                          const std::string& output = "y") {
  auto* o = b.model().add_opset_import();
  o->set_domain("com.microsoft");
  o->set_version(1);
  auto& n = b.node(op, inputs, {output});
  n.set_domain("com.microsoft");
  return n;
}

// B broadcasts along the rows; both ends of uint8 saturate.
TEST(IntegerOps, OrtQLinearAddBroadcasts) {
  ModelBuilder b(13);
  b.input("a", {2, 4}, kU8);
  b.output("y", {2, 4}, kU8);
  b.float_initializer("as", {0.05f}, {});
  b.int_initializer("az", kU8, {}, {100});
  b.int_initializer("b", kU8, {4}, {10, 128, 240, 77});
  b.float_initializer("bs", {0.03f}, {});
  b.int_initializer("bz", kU8, {}, {128});
  b.float_initializer("cs", {0.07f}, {});
  b.int_initializer("cz", kU8, {}, {120});
  ort_node(b, "QLinearAdd", {"a", "as", "az", "b", "bs", "bz", "cs", "cz"});
  HostTensor a = HostTensor::from_values({2, 4}, te::DataType::u8(), {0, 50, 100, 150, 200, 250, 255, 1});
  expect_outputs(b.import(), {a}, {{0, 84, 168, 134, 141, 227, 255, 27}});
}

TEST(IntegerOps, OrtQLinearGlobalAveragePool) {
  ModelBuilder b(13);
  b.input("x", {2, 3, 2, 2}, kU8);
  b.output("y", {2, 3, 1, 1}, kU8);
  b.float_initializer("xs", {0.1f}, {});
  b.int_initializer("xz", kU8, {}, {30});
  b.float_initializer("ys", {0.3f}, {});
  b.int_initializer("yz", kU8, {}, {5});
  ort_node(b, "QLinearGlobalAveragePool", {"x", "xs", "xz", "ys", "yz"});
  std::vector<double> x;
  for (int i = 0; i < 24; ++i) x.push_back((20 * i) % 256);  // uint8 wraps, as numpy made them
  expect_outputs(b.import(), {HostTensor::from_values({2, 3, 2, 2}, te::DataType::u8(), x)},
                 {{5, 32, 58, 21, 26, 53}});
}

// transB, B's scale per column, an int32 C; quantized (y_scale given) or float32 output.
TEST(IntegerOps, OrtQGemmQuantizedAndFloatOutputs) {
  for (bool quantized : {true, false}) {
    ModelBuilder b(13);
    b.input("a", {2, 3}, kU8);
    b.output("y", {2, 2}, quantized ? kU8 : int(onnx::TensorProto::FLOAT));
    b.float_initializer("as", {0.5f}, {});
    b.int_initializer("az", kU8, {}, {128});
    b.int_initializer("b", kI8, {2, 3}, {1, 127, 0, -1, -128, 5});
    b.float_initializer("bs", {0.01f, 0.02f});
    b.int_initializer("bz", kI8, {2}, {0, 0});
    b.int_initializer("c", onnx::TensorProto::INT32, {2}, {100, -300});
    std::vector<std::string> in = {"a", "as", "az", "b", "bs", "bz", "c"};
    if (quantized) {
      b.float_initializer("ys", {0.3f}, {});
      b.int_initializer("yz", kU8, {}, {100});
      in.insert(in.end(), {"ys", "yz"});
    }
    auto& n = ort_node(b, "QGemm", in);
    set_int(n, "transB", 1);
    if (!quantized) set_float(n, "alpha", 2.0f);
    HostTensor a = HostTensor::from_values({2, 3}, te::DataType::u8(), {1, 2, 3, 250, 128, 0});
    SCOPED_TRACE(quantized ? "quantized" : "float");
    expect_outputs(b.import(), {a},
                   {quantized ? std::vector<double>{0, 255, 104, 65}
                              : std::vector<double>{-160.2899932861328, 306.6000061035156, 2.2200000286102295,
                                                    -21.239999771118164}});
  }
}

// ONNX Runtime's QLinearMul, B broadcast along rows; expected values from ONNX Runtime 1.32.
TEST(IntegerOps, OrtQLinearMulBroadcast) {
  ModelBuilder b(13);
  b.input("a", {2, 6}, kU8);
  b.output("y", {2, 6}, kU8);
  b.float_initializer("as", {0.02f}, {});
  b.int_initializer("az", kU8, {}, {128});
  b.int_initializer("b", kU8, {1, 6}, {9, 128, 255, 0, 66, 130});
  b.float_initializer("bs", {0.03f}, {});
  b.int_initializer("bz", kU8, {}, {100});
  b.float_initializer("cs", {0.31f}, {});
  b.int_initializer("cz", kU8, {}, {120});
  ort_node(b, "QLinearMul", {"a", "as", "az", "b", "bs", "bz", "cs", "cz"});
  HostTensor a = HostTensor::from_values({2, 6}, te::DataType::u8(), {0, 17, 128, 200, 255, 90, 3, 250, 77, 128, 140, 1});
  expect_outputs(b.import(), {a}, {{143, 114, 120, 106, 112, 118, 142, 127, 105, 120, 119, 113}});
}

// ONNX Runtime's QLinearSigmoid; expected values from ONNX Runtime 1.32.
TEST(IntegerOps, OrtQLinearSigmoid) {
  ModelBuilder b(13);
  b.input("x", {8}, kU8);
  b.output("y", {8}, kU8);
  b.float_initializer("xs", {0.05f}, {});
  b.int_initializer("xz", kU8, {}, {128});
  b.float_initializer("ys", {1.0f / 256}, {});
  b.int_initializer("yz", kU8, {}, {0});
  ort_node(b, "QLinearSigmoid", {"x", "xs", "xz", "ys", "yz"});
  HostTensor x = HostTensor::from_values({8}, te::DataType::u8(), {0, 60, 120, 128, 200, 255, 131, 97});
  expect_outputs(b.import(), {x}, {{0, 8, 103, 128, 249, 255, 138, 45}});
}

// ONNX Runtime's QLinearConcat: one input in Y's scale and zero point (copied), one
// requantized; expected values from ONNX Runtime 1.32.
TEST(IntegerOps, OrtQLinearConcat) {
  ModelBuilder b(13);
  b.input("p", {2, 3}, kU8);
  b.input("q", {2, 1}, kU8);
  b.output("y", {2, 4}, kU8);
  b.float_initializer("ys", {0.1f}, {});
  b.int_initializer("yz", kU8, {}, {10});
  b.float_initializer("qs", {0.023f}, {});
  b.int_initializer("qz", kU8, {}, {100});
  auto& n = ort_node(b, "QLinearConcat", {"ys", "yz", "p", "ys", "yz", "q", "qs", "qz"});
  set_int(n, "axis", 1);
  expect_outputs(b.import(),
                 {HostTensor::from_values({2, 3}, te::DataType::u8(), {1, 2, 3, 250, 128, 0}),
                  HostTensor::from_values({2, 1}, te::DataType::u8(), {105, 163})},
                 {{1, 2, 3, 11, 250, 128, 0, 24}});
}

// A quantized ShuffleNet unit: half the channels through a QLinearConv, a QLinearConcat that
// requantizes both halves, the channels interleaved and split again. The kernel that writes
// the split reads, per 14-wide vector, one of the concat's inputs: a branch on a condition
// the same in every lane (the other input's index would be outside it), compiled as
// interpreted.
TEST(IntegerOps, QuantizedChannelShuffle) {
  ModelBuilder b(13);
  b.input("x", {1, 24, 14, 14}, kU8);
  b.output("y0", {1, 12, 14, 14}, kU8);
  b.output("y1", {1, 12, 14, 14}, kU8);
  b.initializer("halves", {2}, {12, 12});
  b.initializer("grouped", {5}, {1, 2, 12, 14, 14});
  b.initializer("flat", {4}, {1, 24, 14, 14});
  int8_weight(b, "w", {12, 12, 1, 1});
  quantization(b, "x", 0.02f, 7);
  quantization(b, "w", 0.004f, 0, kI8);
  quantization(b, "c", 0.09f, 120);
  quantization(b, "y", 0.05f, 30);
  set_int(b.node("Split", {"x", "halves"}, {"a", "c"}), "axis", 1);
  b.node("QLinearConv", {"c", "xs", "xz", "w", "ws", "wz", "cs", "cz"}, {"cq"});
  set_int(ort_node(b, "QLinearConcat", {"ys", "yz", "a", "xs", "xz", "cq", "cs", "cz"}, "cat"), "axis", 1);
  b.node("Reshape", {"cat", "grouped"}, {"g"});
  set_ints(b.node("Transpose", {"g"}, {"t"}), "perm", {0, 2, 1, 3, 4});
  b.node("Reshape", {"t", "flat"}, {"s"});
  set_int(b.node("Split", {"s", "halves"}, {"y0", "y1"}), "axis", 1);
  graph::Graph g = b.import();
  // A part made by the Split, not a conv: the concat stays (a table would be a kernel).
  graph::Graph rewritten = g;
  graph::run_passes(rewritten, compile::pass_options_for(codegen::Target::host()));
  int qlinear_concats = 0;
  for (const graph::Node& n : rewritten.nodes) qlinear_concats += !n.dead && n.op == "com.microsoft.QLinearConcat";
  EXPECT_EQ(qlinear_concats, 1);
  std::vector<double> x;
  for (int64_t i = 0; i < 24 * 14 * 14; ++i) x.push_back(double((i * 53 + 7) % 256));
  expect_compiled_as_interpreted(g, {HostTensor::from_values({1, 24, 14, 14}, te::DataType::u8(), x)});
}

// A squeezenet fire module, quantized: two QLinearConvs of one input concatenated by a
// QLinearConcat into another scale, then a third conv. The concat becomes tables fused into
// the two convs and a plain Concat that they write in place; computes as the operators do.
TEST(IntegerOps, QLinearConcatOfConvsIsWrittenInPlace) {
  ModelBuilder b(13);
  b.input("x", {1, 8, 8, 8}, kU8);
  b.output("y", {1, 4, 8, 8}, kU8);
  int8_weight(b, "w1", {16, 8, 1, 1});
  int8_weight(b, "w3", {16, 8, 3, 3});
  int8_weight(b, "wy", {4, 32, 1, 1});
  quantization(b, "x", 0.02f, 7);
  quantization(b, "w", 0.004f, 0, kI8);
  quantization(b, "a", 0.09f, 120);
  quantization(b, "c", 0.05f, 30);
  quantization(b, "y", 0.3f, 128);
  b.node("QLinearConv", {"x", "xs", "xz", "w1", "ws", "wz", "as", "az"}, {"a"});
  set_ints(b.node("QLinearConv", {"x", "xs", "xz", "w3", "ws", "wz", "cs", "cz"}, {"c"}), "pads", {1, 1, 1, 1});
  // The 3x3 conv's part is in the concat's scale already: no table for it.
  set_int(ort_node(b, "QLinearConcat", {"cs", "cz", "a", "as", "az", "c", "cs", "cz"}, "cat"), "axis", 1);
  b.node("QLinearConv", {"cat", "cs", "cz", "wy", "ws", "wz", "ys", "yz"}, {"y"});
  graph::Graph g = b.import();
  graph::Graph rewritten = g;
  graph::run_passes(rewritten, compile::pass_options_for(codegen::Target::host()));
  int tables = 0, concats = 0, qlinear_concats = 0;
  for (const graph::Node& n : rewritten.nodes) {
    if (n.dead) continue;
    tables += n.op == "tuner.LookUp";
    concats += n.op == "Concat";
    qlinear_concats += n.op == "com.microsoft.QLinearConcat";
  }
  EXPECT_EQ(tables, 1);
  EXPECT_EQ(concats, 1);
  EXPECT_EQ(qlinear_concats, 0);
  EXPECT_EQ(graph::in_place_concats(rewritten).size(), 1u);
  std::vector<double> x;
  for (int64_t i = 0; i < 8 * 8 * 8; ++i) x.push_back(double((i * 53 + 7) % 256));
  expect_compiled_as_interpreted(g, {HostTensor::from_values({1, 8, 8, 8}, te::DataType::u8(), x)});
}

// A quantized SiLU, QLinearMul(x, QLinearSigmoid(x)): byte_tables makes it one look-up of
// x's 256 values, which computes what the two operators compute, on every byte.
TEST(IntegerOps, QuantizedSiluIsOneTable) {
  ModelBuilder b(13);
  b.input("x", {2, 128}, kU8);
  b.output("y", {2, 128}, kU8);
  b.float_initializer("xs", {0.06f}, {});
  b.int_initializer("xz", kU8, {}, {140});
  b.float_initializer("ss", {1.0f / 255}, {});
  b.int_initializer("sz", kU8, {}, {0});
  b.float_initializer("ys", {0.035f}, {});
  b.int_initializer("yz", kU8, {}, {20});
  b.node("QLinearSigmoid", {"x", "xs", "xz", "ss", "sz"}, {"s"}).set_domain("com.microsoft");
  ort_node(b, "QLinearMul", {"x", "xs", "xz", "s", "ss", "sz", "ys", "yz"});
  graph::Graph g = b.import();
  graph::Graph rewritten = g;
  graph::run_passes(rewritten, compile::pass_options_for(codegen::Target::host()));
  int tables = 0, others = 0;
  for (const graph::Node& n : rewritten.nodes) (n.op == "tuner.LookUp" ? tables : others) += 1;
  EXPECT_EQ(tables, 1);
  EXPECT_EQ(others, 0);
  std::vector<double> x;
  for (int v = 0; v < 256; ++v) x.push_back(v);
  HostTensor in = HostTensor::from_values({2, 128}, te::DataType::u8(), x);
  EXPECT_EQ(values(graph::evaluate_graph(rewritten, {in})[0]), values(graph::evaluate_graph(g, {in})[0]));
  expect_compiled_as_interpreted(g, {in});
}

}  // namespace
}  // namespace tuner::onnx_tests
