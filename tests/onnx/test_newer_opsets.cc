// Models in opsets 19 to 25, which Debian's libonnx 1.12 does not know (the importer checks
// them in opset 17 form): the operators and forms they added, against onnxruntime 1.32's
// outputs for the same models.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "graph/evaluate.h"
#include "graph/onnx_import.h"
#include "onnx/model_builder.h"
#include "onnx/node_harness.h"

namespace tuner::onnx_tests {
namespace {

using ::testing::HasSubstr;

const std::vector<double> kActivationInput = {-3, -1, -0.5, 0, 0.5, 1, 3};

// One unary node `op` on kActivationInput at `opset`; `set` adds its attributes.
graph::Graph unary_model(int64_t opset, const char* op,
                         const std::function<void(onnx::NodeProto&)>& set = {}) {
  ModelBuilder b(opset);
  b.input("x", {7});
  b.output("y", {7});
  onnx::NodeProto& n = b.node(op, {"x"}, {"y"});
  if (set) set(n);
  return b.import();
}

TEST(NewerOpsets, GeluExactAndTanhApproximation) {
  HostTensor x = floats({7}, kActivationInput);
  expect_outputs(unary_model(20, "Gelu"), {x},
                 {{-0.0040496885776519775, -0.15865525603294373, -0.1542687714099884, 0,
                   0.3457312285900116, 0.8413447141647339, 2.995950222015381}});
  expect_outputs(unary_model(20, "Gelu", [](auto& n) { set_string(n, "approximate", "tanh"); }), {x},
                 {{-0.0036375224590301514, -0.15880796313285828, -0.1542859971523285, 0,
                   0.3457140028476715, 0.8411920070648193, 2.9963626861572266}});
}

TEST(NewerOpsets, SwishWithAlpha) {
  expect_outputs(unary_model(24, "Swish", [](auto& n) { set_float(n, "alpha", 0.5f); }),
                 {floats({7}, kActivationInput)},
                 {{-0.5472766757011414, -0.3775407075881958, -0.21891175210475922, 0,
                   0.2810882329940796, 0.6224592924118042, 2.452723264694214}});
}

// An operator used below the opset that introduced it is refused by name, as onnxruntime
// refuses it (the checker, which sees such models in opset 17 form, would not).
TEST(NewerOpsets, OperatorBelowItsOpsetIsRefused) {
  try {
    unary_model(19, "Gelu");
    FAIL() << "Gelu imported at opset 19";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("unsupported operator: Gelu"));
    EXPECT_THAT(e.what(), HasSubstr("it is in opsets from 20"));
  }
}

TEST(NewerOpsets, OpsetsAboveTwentyFiveAreRefused) {
  ModelBuilder b(26);
  b.input("x", {2});
  b.output("y", {2});
  b.node("Relu", {"x"}, {"y"});
  EXPECT_THAT(b.import_error(), HasSubstr("opset 26 is not supported (Tuner reads opsets 11 to 25)"));
}

TEST(NewerOpsets, RMSNormalizationOverTheLastAxis) {
  ModelBuilder b(23);
  b.input("x", {2, 4});
  b.output("y", {2, 4});
  b.float_initializer("scale", {1, 2, 0.5, -1});
  b.node("RMSNormalization", {"x", "scale"}, {"y"});
  expect_outputs(b.import(), {floats({2, 4}, {1, 2, 3, 4, 0, -1, 0, 1})},
                 {{0.36514812707901, 1.46059250831604, 0.5477222204208374, -1.46059250831604, 0,
                   -2.8283987045288086, 0, -1.4141993522644043}});
}

// Opset 21 scales and shifts each channel (18: each group); a per-group scale is refused there.
TEST(NewerOpsets, GroupNormalizationScalesChannelsFromOpset21) {
  auto model = [](int64_t opset, int64_t params) {
    ModelBuilder b(opset);
    b.input("x", {1, 4, 2, 3});
    b.output("y", {1, 4, 2, 3});
    std::vector<float> s = {1, 2, 3, 4}, sh = {0, 1, 0, -1};
    s.resize(size_t(params)), sh.resize(size_t(params));
    b.float_initializer("s", s);
    b.float_initializer("b", sh);
    set_int(b.node("GroupNormalization", {"x", "s", "b"}, {"y"}), "num_groups", 2);
    return b;
  };
  expect_outputs(
      model(21, 4).import(), {iota({1, 4, 2, 3})},
      {{-1.5932543277740479, -1.3035717010498047, -1.0138890743255615, -0.7242065072059631,
        -0.43452391028404236, -0.1448412984609604, 1.2896826267242432, 1.8690478801727295,
        2.4484128952026367, 3.027778148651123, 3.6071434020996094, 4.186508655548096,
        -4.7797651290893555, -3.910717010498047, -3.041668653488159, -2.1726205348968506,
        -1.303572416305542, -0.4345241189002991, -0.42063450813293457, 0.7380964756011963,
        1.8968274593353271, 3.055558204650879, 4.21428918838501, 5.373020172119141}});
  EXPECT_THAT(model(21, 2).import_error(), HasSubstr("must have shape [channels] = [4] in opset 21"));
  EXPECT_THAT(model(18, 4).import_error(), HasSubstr("must have shape [num_groups] = [2] in opset 18"));
}

// Pad's wrap mode repeats the input, also for pads larger than the dimension.
TEST(NewerOpsets, PadWrapRepeatsTheInput) {
  ModelBuilder b(19);
  b.input("x", {2, 3});
  b.output("y", {3, 9});
  b.initializer("pads", {4}, {1, 2, 0, 4});
  set_string(b.node("Pad", {"x", "pads"}, {"y"}), "mode", "wrap");
  expect_outputs(b.import(), {iota({2, 3})},
                 {{4, 5, 3, 4, 5, 3, 4, 5, 3, 1, 2, 0, 1, 2, 0, 1, 2, 0, 4, 5, 3, 4, 5, 3, 4, 5, 3}});
}

// half_pixel_symmetric: 4 elements at scale 1.7 give 6 (not 6.8), centred on the input.
TEST(NewerOpsets, ResizeHalfPixelSymmetric) {
  for (const char* mode : {"linear", "nearest"}) {
    ModelBuilder b(19);
    b.input("x", {1, 1, 1, 4});
    b.output("y", {1, 1, 1, 6});
    b.float_initializer("scales", {1, 1, 1, 1.7f});
    auto& n = b.node("Resize", {"x", "", "scales"}, {"y"});
    set_string(n, "mode", mode);
    set_string(n, "coordinate_transformation_mode", "half_pixel_symmetric");
    std::vector<double> want =
        std::string(mode) == "linear"
            ? std::vector<double>{1.0294119119644165, 1.6176471710205078, 2.4117648601531982,
                                  3.588235378265381, 5.529412269592285, 7.882352828979492}
            : std::vector<double>{1, 2, 2, 4, 4, 8};
    SCOPED_TRACE(mode);
    expect_outputs(b.import(), {floats({1, 1, 1, 4}, {1, 2, 4, 8})}, {want});
  }
}

TEST(NewerOpsets, AveragePoolWithDilations) {
  ModelBuilder b(19);
  b.input("x", {1, 1, 5, 5});
  b.output("y", {1, 1, 5, 5});
  auto& n = b.node("AveragePool", {"x"}, {"y"});
  set_ints(n, "kernel_shape", {2, 2});
  set_ints(n, "dilations", {2, 2});
  set_ints(n, "pads", {1, 1, 1, 1});
  expect_outputs(b.import(), {iota({1, 1, 5, 5})},
                 {{6, 6, 7, 8, 8, 6, 6, 7, 8, 8, 11, 11, 12, 13, 13, 16, 16, 17, 18, 18, 16, 16, 17, 18, 18}});
}

// Opset 21's block quantization: one scale per 2 columns and row; output_dtype int8.
TEST(NewerOpsets, BlockQuantizationRoundTrip) {
  ModelBuilder b(21);
  b.input("x", {2, 4});
  b.output("q", {2, 4}, onnx::TensorProto::INT8);
  b.output("y", {2, 4});
  b.float_initializer("s", {0.5, 1, 2, 0.25}, {2, 2});
  auto& q = b.node("QuantizeLinear", {"x", "s"}, {"q"});
  set_int(q, "axis", 1);
  set_int(q, "block_size", 2);
  set_int(q, "output_dtype", onnx::TensorProto::INT8);
  auto& d = b.node("DequantizeLinear", {"q", "s"}, {"y"});
  set_int(d, "axis", 1);
  set_int(d, "block_size", 2);
  expect_outputs(b.import(), {floats({2, 4}, {0.5, 1, -2, 3, 4, -5, 6, 7.5})},
                 {{1, 2, -2, 3, 2, -2, 24, 30}, {0.5, 1, -2, 3, 4, -4, 6, 7.5}});
  // A scale of the wrong block shape names the shape it needed.
  ModelBuilder bad(21);
  bad.input("x", {2, 4});
  bad.output("q", {2, 4}, onnx::TensorProto::INT8);
  bad.float_initializer("s", {0.5, 1, 2, 0.25}, {1, 4});
  auto& bq = bad.node("QuantizeLinear", {"x", "s"}, {"q"});
  set_int(bq, "block_size", 2);
  set_int(bq, "output_dtype", onnx::TensorProto::INT8);
  EXPECT_THAT(bad.import_error(), HasSubstr("y_scale of blocks of 2 must have shape 2x2, got 1x4"));
}

// Cast's saturate attribute (opset 19, for float8 targets) is accepted and changes nothing.
TEST(NewerOpsets, CastWithSaturate) {
  ModelBuilder b(21);
  b.input("x", {3});
  b.output("y", {3}, onnx::TensorProto::INT32);
  auto& n = b.node("Cast", {"x"}, {"y"});
  set_int(n, "to", onnx::TensorProto::INT32);
  set_int(n, "saturate", 1);
  expect_outputs(b.import(), {floats({3}, {1.5, -2.5, 7})}, {{1, -2, 7}});
}

}  // namespace
}  // namespace tuner::onnx_tests
