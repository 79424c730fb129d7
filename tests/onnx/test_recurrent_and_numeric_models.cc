// Models built in C++ (onnx/model_builder.h): recurrent layers in the forms the node tests
// lack, against ONNX's equations in double; exact integer and float arithmetic.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <limits>

#include "graph/evaluate.h"
#include "onnx/model_builder.h"
#include "onnx/node_harness.h"
#include "support/error.h"
#include "support/rng.h"

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
  // Hidden sizes a vector block divides: constant W and R are then packed into column panels
  // (GRU's second product reads R from its third gate's panels on).
  add({.op = "GRU", .direction = "bidirectional", .H = 16});
  add({.op = "LSTM", .layout = 1, .H = 32});
  add({.op = "RNN", .direction = "reverse", .H = 16});
  // Constant W and R (initializers, as exported models have them) are transposed or packed at
  // compile time (graph::pack_recurrent_weights) and read as matrix products.
  auto check = [](const Recurrent& c, bool constant_weights) {
    SCOPED_TRACE(c.op + " " + c.direction + " layout " + std::to_string(c.layout) +
                 (constant_weights ? " constant W, R" : ""));
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
    Rng rng(11);
    std::vector<HostTensor> in, fed;
    for (const auto& s : shapes) in.push_back(HostTensor::random(s, te::DataType::f32(), rng));
    for (size_t i = 0; i < names.size(); ++i) {
      if (constant_weights && (names[i] == "W" || names[i] == "R")) {
        std::vector<float> v(size_t(in[i].num_elements()));
        for (size_t k = 0; k < v.size(); ++k) v[k] = float(in[i].get(int64_t(k)));
        b.float_initializer(names[i], v, shapes[i]);
        continue;
      }
      b.input(names[i], shapes[i]);
      fed.push_back(in[i]);
    }
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
    Recurrent exact = c;
    exact.clip = c.clip > 0 ? double(float(c.clip)) : 0;
    expect_outputs(g, fed, recurrent_reference(exact, in));
  };
  for (bool constant_weights : {false, true})
    for (const Recurrent& c : cases) check(c, constant_weights);
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

// A Clip bound left out is float's lowest or largest value (ONNX), not an infinity: infinite
// inputs come out finite as in onnxruntime (they passed through).
TEST(GraphModels, ClipWithoutABoundMakesInfinitiesFinite) {
  ModelBuilder b(13);
  b.input("x", {4});
  b.output("none", {4});
  b.output("low", {4});
  b.float_initializer("zero", {0.0f});
  b.node("Clip", {"x"}, {"none"});
  b.node("Clip", {"x", "zero"}, {"low"});
  graph::Graph g = b.import();
  const float inf = std::numeric_limits<float>::infinity(), big = std::numeric_limits<float>::max();
  HostTensor x = HostTensor::from_values({4}, te::DataType::f32(), {inf, -inf, 1, -1});
  for (const char* how : {"interpreted", "compiled"}) {
    std::vector<HostTensor> out =
        std::string(how) == "compiled" ? run_compiled(g, {x}) : graph::evaluate_graph(g, {x});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(values(out[0]), (std::vector<double>{big, -big, 1, -1})) << how;
    EXPECT_EQ(values(out[1]), (std::vector<double>{big, 0, 1, 0})) << how;
  }
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

// Normalizations of values far from zero (mean 1e4, unit deviations): a float32 mean of the
// values was ~1e-3 of a deviation off (onnxruntime 1.32: LayerNorm 4e-4, InstanceNorm 2e-3,
// GroupNorm 3.9); sums of deviations from each group's first element give float32 accuracy.
// MeanVarianceNormalization's E[x^2] - E[x]^2 came out negative (NaN). Against the same
// normalization in double.
TEST(GraphModels, NormalizationsOfValuesFarFromZeroAreAccurate) {
  struct Case {
    std::string op;
    std::vector<int64_t> shape;
    int64_t groups;  // elements of a group are consecutive: rows, planes, channel groups
  };
  for (const Case& k :
       {Case{"LayerNormalization", {2, 3, 64}, 6}, Case{"InstanceNormalization", {1, 2, 4, 8}, 2},
        Case{"GroupNormalization", {1, 4, 2, 4}, 2},
        Case{"MeanVarianceNormalization", {1, 2, 4, 8}, 2}}) {
    bool mvn = k.op == "MeanVarianceNormalization";  // x - mean over sqrt(var) + 1e-9
    ModelBuilder b(18);
    b.input("x", k.shape);
    b.output("y", k.shape);
    int64_t params = k.op == "LayerNormalization"      ? k.shape.back()
                     : k.op == "InstanceNormalization" ? k.shape[1]
                                                       : k.groups;
    b.float_initializer("scale", std::vector<float>(size_t(params), 1.0f));
    b.float_initializer("bias", std::vector<float>(size_t(params), 0.0f));
    onnx::NodeProto& n =
        mvn ? b.node(k.op, {"x"}, {"y"}) : b.node(k.op, {"x", "scale", "bias"}, {"y"});
    if (k.op == "GroupNormalization") set_int(n, "num_groups", k.groups);
    graph::Graph g = b.import();
    HostTensor x(k.shape, te::DataType::f32());
    Rng rng(5);
    for (int64_t i = 0; i < x.num_elements(); ++i)
      x.set(i, double(float(1e4 + 2 * rng.uniform() - 1)));
    std::vector<double> v = values(x), want(v.size());
    size_t per = v.size() / size_t(k.groups);
    for (size_t grp = 0; grp < size_t(k.groups); ++grp) {
      double mean = 0, var = 0;
      for (size_t i = grp * per; i < (grp + 1) * per; ++i) mean += v[i] / double(per);
      for (size_t i = grp * per; i < (grp + 1) * per; ++i)
        var += (v[i] - mean) * (v[i] - mean) / double(per);
      for (size_t i = grp * per; i < (grp + 1) * per; ++i)
        want[i] = (v[i] - mean) / (mvn ? std::sqrt(var) + 1e-9 : std::sqrt(var + 1e-5));
    }
    SCOPED_TRACE(k.op);
    expect_outputs(g, {x}, {want});
  }
}

// A float out of int32's range (undefined in ONNX) casts as compiled code and ONNX Runtime do
// on x86: to INT32_MIN, folded as a constant too (that gave 1e10 -> 1410065408).
TEST(GraphModels, OutOfRangeFloatCastsFoldAsTheyRun) {
  ModelBuilder b(13);
  b.input("x", {4});
  b.output("run", {4}, onnx::TensorProto::INT32);
  b.output("folded", {4}, onnx::TensorProto::INT32);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  b.float_initializer("c", {1e10f, -1e10f, nan, 3.5f});
  set_int(b.node("Cast", {"x"}, {"run"}), "to", onnx::TensorProto::INT32);
  set_int(b.node("Cast", {"c"}, {"folded"}), "to", onnx::TensorProto::INT32);
  graph::Graph g = b.import();
  HostTensor x = floats({4}, {1e10, -1e10, nan, 3.5});
  const double lo = std::numeric_limits<int32_t>::min();
  std::vector<double> want{lo, lo, lo, 3};
#if defined(__x86_64__)
  expect_outputs(g, {x}, {want, want});
#else  // compiled code elsewhere may saturate: the interpreter's answer only
  EXPECT_EQ(values(graph::evaluate_graph(g, {x})[1]), want);
#endif
}

// float16 Sum and Mean add up in float32 and round once, as ONNX Runtime does (60000 + 60000
// overflowed float16 before - 60000 came).
TEST(GraphModels, Float16SumsAddUpInFloat32) {
  ModelBuilder b(13);
  for (const char* n : {"a", "b", "c"}) b.input(n, {2}, onnx::TensorProto::FLOAT16);
  b.output("sum", {2}, onnx::TensorProto::FLOAT16);
  b.output("mean", {2}, onnx::TensorProto::FLOAT16);
  b.node("Sum", {"a", "b", "c"}, {"sum"});
  b.node("Mean", {"a", "b", "c"}, {"mean"});
  graph::Graph g = b.import();
  auto half = [](std::vector<double> v) {
    return HostTensor::from_values({2}, te::DataType::f16(), v);
  };
  expect_outputs(g, {half({60000, 1}), half({60000, 2}), half({-60000, 3})},
                 {{60000, 6}, {20000, 2}});
}

// A label that is not a letter is named whole (one byte of 'é' was printed: invalid UTF-8).
TEST(GraphModels, EinsumNamesABadLabelWhole) {
  ModelBuilder b(13);
  b.input("x", {2, 2});
  b.output("y", {2});
  set_string(b.node("Einsum", {"x"}, {"y"}), "equation", "a\xc3\xa9->a");
  EXPECT_THAT([&] { b.import(); }, testing::ThrowsMessage<UserError>(
                                       testing::HasSubstr("bad character '\xc3\xa9'")));
}

}  // namespace
}  // namespace tuner::onnx_tests
