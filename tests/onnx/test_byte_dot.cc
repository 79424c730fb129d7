// Integer convs and matmuls as byte dot products (graph::byte_dot_convs, pack_matmul_weights,
// te's dot_u8s8x4, x86 VNNI): the rewritten graph computes exactly what the int32 products of
// the ONNX layout compute,
// interpreted, compiled with vpdpbusd where this CPU has it, and compiled without it.
#include <array>
#include <optional>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "codegen/target.h"
#include "compile/compile_model.h"
#include "graph/evaluate.h"
#include "graph/passes.h"
#include "onnx/model_builder.h"
#include "onnx/node_harness.h"
#include "ops/te_eval.h"

namespace tuner::onnx_tests {
namespace {

constexpr int kUint8 = onnx::TensorProto::UINT8, kInt8 = onnx::TensorProto::INT8;

struct ByteConvCase {
  const char* name;
  const char* op;        // QLinearConv or ConvInteger
  int x_type;            // kUint8 or kInt8
  int64_t c, hw, kernel, stride, pad;
  int64_t x_zero_point;  // of x's type
  bool bias;
  int64_t k = 32;             // output channels
  bool plain_weight = false;  // byte_dot_convs keeps the weight unpacked (1x1 on wide rows)
};

// An integer conv `op` (QLinearConv or ConvInteger) of input "x" (x_type, zero point x_zp)
// by weights of `w_shape` with values across int8, into "y" of `y_shape`: for QLinearConv a
// per-channel zero point of 0 (as ONNX Runtime's quantizer writes them), scales of w_unit x 1..7
// and y_scale, and an int32 bias if `bias`; for ConvInteger a scalar weight zero point of 1 (w - 1
// in [-128, 126]: still int8).
onnx::NodeProto& integer_conv(ModelBuilder& b, const char* op, int x_type, int64_t x_zp, const ops::Shape& w_shape,
                              const ops::Shape& y_shape, float w_unit, float y_scale, bool bias) {
  int64_t k = w_shape[0], count = 1;
  for (int64_t d : w_shape) count *= d;
  std::vector<int64_t> w;
  for (int64_t i = 0; i < count; ++i) w.push_back((i * 37 + 11) % 255 - 127);
  b.int_initializer("w", kInt8, w_shape, w);
  b.int_initializer("xz", x_type, {}, {x_zp});
  if (std::string(op) == "ConvInteger") {
    b.output("y", y_shape, onnx::TensorProto::INT32);
    b.int_initializer("wz", kInt8, {}, {1});
    return b.node("ConvInteger", {"x", "w", "xz", "wz"}, {"y"});
  }
  b.output("y", y_shape, kUint8);
  b.float_initializer("xs", {0.02f}, {});
  std::vector<float> ws;
  for (int64_t m = 0; m < k; ++m) ws.push_back(w_unit * float(1 + m % 7));
  b.float_initializer("ws", ws);
  b.int_initializer("wz", kInt8, {k}, std::vector<int64_t>(size_t(k), 0));
  b.float_initializer("ys", {y_scale}, {});
  b.int_initializer("yz", kUint8, {}, {100});
  std::vector<std::string> in = {"x", "xs", "xz", "w", "ws", "wz", "ys", "yz"};
  if (bias) {
    std::vector<int64_t> values;
    for (int64_t m = 0; m < k; ++m) values.push_back(m * 301 - 4000);
    b.int_initializer("bias", onnx::TensorProto::INT32, {k}, values);
    in.push_back("bias");
  }
  return b.node("QLinearConv", in, {"y"});
}

// x [1, c, hw, hw] -> k channels.
graph::Graph byte_conv_model(const ByteConvCase& cc) {
  ModelBuilder b(13);
  int64_t out = (cc.hw + 2 * cc.pad - cc.kernel) / cc.stride + 1;
  b.input("x", {1, cc.c, cc.hw, cc.hw}, cc.x_type);
  onnx::NodeProto& n = integer_conv(b, cc.op, cc.x_type, cc.x_zero_point, {cc.k, cc.c, cc.kernel, cc.kernel},
                                    {1, cc.k, out, out}, 0.0005f, 0.1f, cc.bias);
  set_ints(n, "pads", {cc.pad, cc.pad, cc.pad, cc.pad});
  set_ints(n, "strides", {cc.stride, cc.stride});
  return b.import();
}

HostTensor byte_image(const ByteConvCase& cc) {
  std::vector<double> x;
  for (int64_t i = 0; i < cc.c * cc.hw * cc.hw; ++i) {
    int64_t v = (i * 53 + 7) % 256;  // every byte value, 0 and 255 included
    x.push_back(cc.x_type == kUint8 ? double(v) : double(v - 128));
  }
  return HostTensor::from_values({1, cc.c, cc.hw, cc.hw}, cc.x_type == kUint8 ? te::DataType::u8() : te::DataType::i8(),
                                 x);
}

graph::PassOptions host_passes_with_byte_dot(const codegen::Target& t) {
  graph::PassOptions p = compile::pass_options_for(t);
  p.byte_dot = true;
  return p;
}

const ByteConvCase kByteConvCases[] = {
    {"stem_3_channels_7x7_stride2", "QLinearConv", kUint8, 3, 20, 7, 2, 3, 0, true},
    {"padded_3x3_zero_point_120", "QLinearConv", kUint8, 8, 9, 3, 1, 1, 120, true},
    {"int8_data_6_channels_stride2", "QLinearConv", kInt8, 6, 11, 3, 2, 1, -5, false},
    {"conv_integer_1x1", "ConvInteger", kUint8, 16, 7, 1, 1, 0, 7, false},
    {"conv_integer_padded_zero_point_255", "ConvInteger", kUint8, 5, 8, 3, 1, 2, 255, false},
    // 24 output channels: half vectors (AVX-512).
    {"padded_3x3_24_outputs", "QLinearConv", kUint8, 8, 9, 3, 1, 1, 3, true, 24},
    // Rows of two vectors or more (40 >= 2 x 16 lanes, 2 x 8): weights plain, a row's tail.
    {"pointwise_wide_rows", "QLinearConv", kUint8, 24, 40, 1, 1, 0, 131, true, 24, true},
    {"conv_integer_pointwise_wide_rows", "ConvInteger", kUint8, 10, 36, 1, 1, 0, 9, false, 32, true},
    // An expansion over rows between one and two vectors (20: 16 + 4 lanes) is plain too.
    {"pointwise_expansion_20_wide", "QLinearConv", kUint8, 8, 20, 1, 1, 0, 5, true, 32, true},
    // Output channels no block divides (shufflenet's 58 and 116), narrow rows: plain too; 58
    // input channels end in a half word.
    {"pointwise_58_channels_14_wide", "QLinearConv", kUint8, 58, 14, 1, 1, 0, 77, true, 58, true},
    {"pointwise_116_outputs_7_wide", "QLinearConv", kUint8, 16, 7, 1, 1, 0, 0, true, 116, true},
};

// g rewritten into byte dot products (one tuner.ByteWords node) computes what g computes,
// interpreted and compiled, with VNNI where this CPU has it and without.
void expect_byte_dot_form_computes_as_int32(const graph::Graph& g, const std::vector<HostTensor>& in,
                                            std::optional<bool> plain_weight = std::nullopt, int byte_words = 1) {
  codegen::Target host = codegen::Target::host();
  codegen::Target plain = codegen::Target::parse(host.str() + " -mattr=-avx512vnni,-avxvnni");
  std::vector<double> want = values(graph::evaluate_graph(g, in)[0]);
  graph::Graph rewritten = g;
  graph::run_passes(rewritten, host_passes_with_byte_dot(host));
  int words = 0;
  for (const graph::Node& n : rewritten.nodes) words += n.op == "tuner.ByteWords";
  EXPECT_EQ(words, byte_words) << "tuner.ByteWords nodes";
  for (const graph::Node& n : rewritten.nodes) {
    if (n.op == "QLinearConv") {  // fold_requantize_scales' multipliers
      EXPECT_TRUE(n.inputs.size() > 9 && n.inputs[9] >= 0) << "requantize scales not folded";
    }
    if (plain_weight && (n.op == "QLinearConv" || n.op == "ConvInteger")) {
      size_t rank = rewritten.values[size_t(n.inputs[n.op == "QLinearConv" ? 3 : 1])].shape.size();
      EXPECT_EQ(rank, *plain_weight ? 4u : 5u) << "weight layout";
    }
  }
  EXPECT_EQ(values(graph::evaluate_graph(rewritten, in)[0]), want) << "interpreted";
  EXPECT_EQ(values(run_compiled(g, in, host, host_passes_with_byte_dot(host))[0]), want)
      << "compiled for " << host.str();
  EXPECT_EQ(values(run_compiled(g, in, plain, host_passes_with_byte_dot(plain))[0]), want) << "compiled without VNNI";
}

bool on_x86(const codegen::Target& host) { return host.llvm_arch() == "x86_64"; }

TEST(ByteDot, ConvsComputeAsTheirInt32Products) {
  codegen::Target host = codegen::Target::host();
  if (!on_x86(host)) GTEST_SKIP() << "skipped: the byte-dot convs are x86 code (host " << host.str() << ")";
  for (const ByteConvCase& cc : kByteConvCases) {
    SCOPED_TRACE(cc.name);
    expect_byte_dot_form_computes_as_int32(byte_conv_model(cc), {byte_image(cc)}, cc.plain_weight);
  }
}

struct DepthwiseCase {
  const char* name;
  const char* op;  // QLinearConv or ConvInteger
  int64_t c, hw, kh, kw, stride;
  std::array<int64_t, 4> pads;  // top, left, bottom, right
  int64_t x_zero_point;
};

// Depthwise x [1, c, hw, hw] (one output channel per group), uint8 data covering every byte.
graph::Graph depthwise_model(const DepthwiseCase& dc) {
  ModelBuilder b(13);
  int64_t oh = (dc.hw + dc.pads[0] + dc.pads[2] - dc.kh) / dc.stride + 1;
  int64_t ow = (dc.hw + dc.pads[1] + dc.pads[3] - dc.kw) / dc.stride + 1;
  b.input("x", {1, dc.c, dc.hw, dc.hw}, kUint8);
  onnx::NodeProto& n = integer_conv(b, dc.op, kUint8, dc.x_zero_point, {dc.c, 1, dc.kh, dc.kw},
                                    {1, dc.c, oh, ow}, 0.004f, 0.2f, true);
  set_ints(n, "pads", {dc.pads[0], dc.pads[1], dc.pads[2], dc.pads[3]});
  set_ints(n, "strides", {dc.stride, dc.stride});
  set_ints(n, "kernel_shape", {dc.kh, dc.kw});
  set_int(n, "group", dc.c);
  return b.import();
}

// Rows of 33 (two vectors and a tail), 14 (both borders in one vector) and stride 2, zero
// points 0, 3 and 255, a 2-wide window with asymmetric padding.
TEST(ByteDot, DepthwiseConvsComputeAsTheirInt32Products) {
  codegen::Target host = codegen::Target::host();
  if (!on_x86(host)) GTEST_SKIP() << "skipped: the byte-dot convs are x86 code (host " << host.str() << ")";
  const DepthwiseCase cases[] = {
      {"rows_of_33", "QLinearConv", 16, 33, 3, 3, 1, {1, 1, 1, 1}, 3},
      {"rows_of_14_zero_point_0", "QLinearConv", 24, 14, 3, 3, 1, {1, 1, 1, 1}, 0},
      {"stride_2_odd_rows", "QLinearConv", 8, 15, 3, 3, 2, {1, 1, 1, 1}, 255},
      {"stride_2_even_rows", "QLinearConv", 16, 40, 3, 3, 2, {0, 0, 1, 1}, 7},
      {"conv_integer_2x2_window", "ConvInteger", 8, 9, 2, 2, 1, {0, 1, 1, 0}, 200},
  };
  for (const DepthwiseCase& dc : cases) {
    SCOPED_TRACE(dc.name);
    graph::Graph g = depthwise_model(dc);
    graph::Graph rewritten = g;
    graph::run_passes(rewritten, host_passes_with_byte_dot(host));
    int rows = 0;
    for (const graph::Node& n : rewritten.nodes) rows += n.attrs.count("tuner_row_words") ? 1 : 0;
    EXPECT_EQ(rows, 1) << "not rewritten";
    std::vector<double> x;
    for (int64_t i = 0; i < dc.c * dc.hw * dc.hw; ++i) x.push_back(double((i * 53 + 7) % 256));
    expect_byte_dot_form_computes_as_int32(g, {HostTensor::from_values({1, dc.c, dc.hw, dc.hw}, te::DataType::u8(), x)},
                                           std::nullopt, 0);
  }
}

// A [..., m, k] by a constant B [k, 32]: k not a multiple of 4, A's zero point a constant, a
// model input (as DynamicQuantizeLinear gives it) or absent, int8 A.
TEST(ByteDot, IntegerMatMulsComputeAsTheirInt32Products) {
  codegen::Target host = codegen::Target::host();
  if (!on_x86(host)) GTEST_SKIP() << "skipped: the byte-dot products are x86 code (host " << host.str() << ")";
  for (const char* form : {"constant_zero_point", "input_zero_point", "int8_qlinear"}) {
    SCOPED_TRACE(form);
    bool qlinear = std::string(form) == "int8_qlinear", input_zp = std::string(form) == "input_zero_point";
    int a_type = qlinear ? kInt8 : kUint8;
    ModelBuilder b(13);
    b.input("a", {2, 5, 10}, a_type);
    if (input_zp) b.input("az", {}, kUint8);
    else b.int_initializer("az", a_type, {}, {qlinear ? -3 : 7});
    std::vector<int64_t> w;
    for (int i = 0; i < 10 * 32; ++i) w.push_back((i * 37 + 11) % 255 - 127);
    b.int_initializer("b", kInt8, {10, 32}, w);
    b.int_initializer("bz", kInt8, {}, {1});
    if (qlinear) {
      b.output("y", {2, 5, 32}, kUint8);
      b.float_initializer("as", {0.05f}, {});
      b.float_initializer("bs", {0.01f}, {});
      b.float_initializer("ys", {0.4f}, {});
      b.int_initializer("yz", kUint8, {}, {128});
      b.node("QLinearMatMul", {"a", "as", "az", "b", "bs", "bz", "ys", "yz"}, {"y"});
    } else {
      b.output("y", {2, 5, 32}, onnx::TensorProto::INT32);
      b.node("MatMulInteger", {"a", "b", "az", "bz"}, {"y"});
    }
    std::vector<double> a;
    for (int i = 0; i < 100; ++i) a.push_back(qlinear ? (i * 53) % 256 - 128 : (i * 53) % 256);
    std::vector<HostTensor> in = {HostTensor::from_values({2, 5, 10}, qlinear ? te::DataType::i8() : te::DataType::u8(), a)};
    if (input_zp) in.push_back(HostTensor::from_values({}, te::DataType::u8(), {201}));
    expect_byte_dot_form_computes_as_int32(b.import(), in);
  }
}

// ONNX Runtime's QGemm (a classifier's): transB with B's zero point and scale per row of B,
// an int32 C, 24 output columns (half vectors with AVX-512).
TEST(ByteDot, QGemmComputesAsItsInt32Product) {
  codegen::Target host = codegen::Target::host();
  if (!on_x86(host)) GTEST_SKIP() << "skipped: the byte-dot products are x86 code (host " << host.str() << ")";
  ModelBuilder b(13);
  auto* ms = b.model().add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  b.input("a", {3, 10}, kUint8);
  b.output("y", {3, 24}, kUint8);
  std::vector<int64_t> w, bz, c;
  std::vector<float> bs;
  for (int i = 0; i < 24 * 10; ++i) w.push_back((i * 37 + 11) % 255 - 127);
  for (int j = 0; j < 24; ++j) {
    bz.push_back(j % 2);  // w - 1 still int8
    bs.push_back(0.002f * float(1 + j % 5));
    c.push_back(j * 97 - 1000);
  }
  b.float_initializer("as", {0.05f}, {});
  b.int_initializer("az", kUint8, {}, {9});
  b.int_initializer("b", kInt8, {24, 10}, w);
  b.float_initializer("bs", bs);
  b.int_initializer("bz", kInt8, {24}, bz);
  b.int_initializer("c", onnx::TensorProto::INT32, {24}, c);
  b.float_initializer("ys", {0.3f}, {});
  b.int_initializer("yz", kUint8, {}, {100});
  auto& n = b.node("QGemm", {"a", "as", "az", "b", "bs", "bz", "c", "ys", "yz"}, {"y"});
  n.set_domain("com.microsoft");
  set_int(n, "transB", 1);
  std::vector<double> a;
  for (int i = 0; i < 30; ++i) a.push_back((i * 53) % 256);
  expect_byte_dot_form_computes_as_int32(b.import(), {HostTensor::from_values({3, 10}, te::DataType::u8(), a)});
}

TEST(ByteDot, ConvsOfOneInputShareTheirWords) {
  ModelBuilder b(13);
  b.input("x", {1, 8, 6, 6}, kUint8);
  b.output("y1", {1, 32, 6, 6}, onnx::TensorProto::INT32);
  b.output("y2", {1, 32, 6, 6}, onnx::TensorProto::INT32);
  b.int_initializer("xz", kUint8, {}, {3});
  std::vector<int64_t> w(32 * 8, 1);
  b.int_initializer("w1", kInt8, {32, 8, 1, 1}, w);
  for (size_t i = 0; i < w.size(); ++i) w[i] = int64_t(i % 9) - 4;
  b.int_initializer("w2", kInt8, {32, 8, 1, 1}, w);
  b.node("ConvInteger", {"x", "w1", "xz"}, {"y1"});
  b.node("ConvInteger", {"x", "w2", "xz"}, {"y2"});
  graph::Graph g = b.import();
  graph::PassOptions p;
  p.vector_lanes = 16, p.vector_registers = 32, p.byte_dot = true;
  graph::run_passes(g, p);
  int words = 0, convs = 0;
  for (const graph::Node& n : g.nodes) {
    words += n.op == "tuner.ByteWords";
    convs += n.op == "ConvInteger" && g.values[size_t(n.inputs[0])].dtype == te::DataType::i32();
  }
  EXPECT_EQ(words, 1);
  EXPECT_EQ(convs, 2);
}

// Weights minus their zero point outside int8 (uint8 weights, zero point 0), grouped convs
// and targets without byte dot products keep the int32 products.
TEST(ByteDot, OnlyInt8WeightsOfOneGroupAreRewritten) {
  auto rewritten = [](int w_type, int64_t groups, bool byte_dot) {
    ModelBuilder b(13);
    b.input("x", {1, 8, 6, 6}, kUint8);
    b.output("y", {1, 32, 6, 6}, onnx::TensorProto::INT32);
    b.int_initializer("w", w_type, {32, 8 / groups, 1, 1}, std::vector<int64_t>(size_t(32 * 8 / groups), 200 % (w_type == kUint8 ? 256 : 100)));
    auto& n = b.node("ConvInteger", {"x", "w"}, {"y"});
    set_int(n, "group", groups);
    graph::Graph g = b.import();
    graph::PassOptions p;
    p.vector_lanes = 16, p.vector_registers = 32, p.byte_dot = byte_dot;
    graph::run_passes(g, p);
    for (const graph::Node& node : g.nodes)
      if (node.op == "tuner.ByteWords") return true;
    return false;
  };
  EXPECT_TRUE(rewritten(kInt8, 1, true));
  EXPECT_FALSE(rewritten(kUint8, 1, true));  // 200 is no int8
  EXPECT_FALSE(rewritten(kInt8, 2, true));
  EXPECT_FALSE(rewritten(kInt8, 1, false));
}

TEST(ByteDot, DotProductOfExtremeBytes) {
  te::DataType i32 = te::DataType::i32();
  te::Tensor a = te::placeholder({3}, i32, "a"), w = te::placeholder({3}, i32, "w");
  te::Tensor dot = te::compute(
      {3}, [&](const std::vector<te::Var>& i) { return te::call(te::Intrinsic::DotU8S8x4, {a(i[0]), w(i[0])}); },
      "dot");
  HostTensor av = HostTensor::from_values({3}, i32, {-1, -1, 0x04030201});
  HostTensor wv = HostTensor::from_values({3}, i32, {double(int32_t(0x80808080)), 0x7F7F7F7F, double(int32_t(0xFF01FF02))});
  std::vector<HostTensor> got = ops::evaluate_dag(te::ComputeDAG({a, w}, {dot}), {av, wv});
  EXPECT_EQ(values(got[0]), (std::vector<double>{4 * 255 * -128, 4 * 255 * 127, 1 * 2 + 2 * -1 + 3 * 1 + 4 * -1}));
}

}  // namespace
}  // namespace tuner::onnx_tests
