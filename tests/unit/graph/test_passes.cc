// The algebraic graph passes on hand-built graphs: each must remove or reorder what it
// promises, and the graph after every pass must compute what the graph before did
// (evaluate_graph on random inputs).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "graph/evaluate.h"
#include "unit/graph/graph_builder.h"

namespace tuner::graph {

namespace {

using test::Builder;
using test::float_attr;
using test::int_attr;
using test::ints;

// Runs the passes on `raw` and checks the result equals the unoptimized graph's on random
// inputs; returns the optimized graph.
Graph optimize_and_check(const Graph& raw) {
  Graph opt = raw;
  run_passes(opt);
  Rng rng(7);
  std::vector<ops::HostTensor> in;
  for (int v : raw.inputs)
    in.push_back(ops::HostTensor::random(raw.values[size_t(v)].shape,
                                         raw.values[size_t(v)].dtype, rng));
  std::vector<ops::HostTensor> want = evaluate_graph(raw, in), got = evaluate_graph(opt, in);
  EXPECT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size() && i < got.size(); ++i) {
    EXPECT_EQ(want[i].shape, got[i].shape);
    auto cmp = ops::compare(got[i], want[i], 1e-6, 1e-6);
    EXPECT_EQ(cmp.mismatches, 0) << "output " << i << ": " << cmp.message;
  }
  return opt;
}

// The passes for a target with `lanes` float lanes per vector and `registers` vector
// registers (its layout passes included).
Graph for_target(const Graph& raw, int lanes, int registers = 32) {
  Graph g = raw;
  PassOptions po;
  po.vector_lanes = lanes;
  po.vector_registers = registers;
  run_passes(g, po);
  return g;
}

// B's shape and the integer attribute `attr` (0 when absent) of each live node of `ops`.
using BAttrs = std::vector<std::pair<ops::Shape, int64_t>>;
BAttrs b_and_attr(const Graph& g, const std::set<std::string>& ops, const std::string& attr) {
  BAttrs out;
  for (const Node& n : g.nodes)
    if (!n.dead && ops.count(n.op)) {
      auto a = n.attrs.find(attr);
      out.push_back({g.values[size_t(n.inputs[1])].shape, a == n.attrs.end() ? 0 : a->second.i});
    }
  return out;
}

// The layout passes change how a graph computes, not what: same outputs on `ins`.
void expect_same_outputs(const Graph& raw, const Graph& g, const std::vector<ops::HostTensor>& ins) {
  auto want = evaluate_graph(raw, ins), got = evaluate_graph(g, ins);
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].shape, want[i].shape);
    auto cmp = ops::compare(got[i], want[i], 1e-5, 1e-5);
    EXPECT_TRUE(cmp.ok) << "output " << i << ": " << cmp.message;
  }
}

std::vector<std::string> ops_of(const Graph& g) {
  std::vector<std::string> out;
  for (const Node& n : g.nodes)
    if (!n.dead) out.push_back(n.op);
  return out;
}

using Ops = std::vector<std::string>;

}  // namespace

TEST(Passes, NeutralConstantsAreRemoved) {
  Builder b;
  int x = b.input({2, 8});
  int m = b.node("Mul", {x, b.fill({8}, 1.0)});         // x * 1 (broadcast, same shape)
  int a = b.node("Add", {b.fill({}, -0.0), m});         // -0 + x
  int d = b.node("Div", {a, b.fill({1, 8}, 1.0)});      // x / 1
  int s = b.node("Sub", {d, b.fill({2, 8}, 0.0)});      // x - 0
  int r = b.node("Relu", {s});
  int grow = b.node("Mul", {r, b.fill({3, 2, 8}, 1.0)});  // broadcasting grows the shape: kept
  int sub0 = b.node("Sub", {b.fill({}, 0.0), grow});      // 0 - x is -x: kept
  Graph g = optimize_and_check(b.raw({sub0}));
  EXPECT_EQ(ops_of(g), (Ops{"Relu", "Mul", "Sub"})) << g.str();
  // x + 0 and x - (-0) turn x = -0 into +0 (1/x: -inf becomes inf): kept (session 58).
  Builder b2;
  int y = b2.input({4});
  int plus0 = b2.node("Add", {y, b2.fill({}, 0.0)});
  int minus_neg0 = b2.node("Sub", {y, b2.fill({}, -0.0)});
  Graph g2 = optimize_and_check(b2.raw({b2.node("Mul", {plus0, minus_neg0})}));
  EXPECT_EQ(ops_of(g2), (Ops{"Add", "Sub", "Mul"})) << g2.str();
}

// Only nodes making the same outputs merge: Split in two and in three pieces, a
// LayerNormalization with and without its statistics, float attributes that differ in the
// 7th digit (merged, the second read outputs the first does not have, or got its values).
TEST(Passes, CommonSubexpressionsMakeTheSameOutputs) {
  Builder b;
  int x = b.input({2, 6});
  auto two = b.node_n("Split", {x}, 2, {{"axis", int_attr(1)}});
  auto three = b.node_n("Split", {x}, 3, {{"axis", int_attr(1)}});
  int cat = b.node("Concat", {two[0], two[1], three[0], three[1], three[2]},
                   {{"axis", int_attr(1)}});
  int ln1 = b.node("LayerNormalization", {x, b.fill({6}, 1.0)});
  auto ln3 = b.node_n("LayerNormalization", {x, b.fill({6}, 1.0)}, 3);
  int t1 = b.node("LeakyRelu", {x}, {{"alpha", float_attr(1000001)}});
  int t2 = b.node("LeakyRelu", {x}, {{"alpha", float_attr(1000002)}});
  int d = b.node("Sub", {t1, t2});
  Graph g = optimize_and_check(b.raw({cat, ln1, ln3[1], d}));
  auto ops = ops_of(g);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Split"), 2) << g.str();
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "LeakyRelu"), 2) << g.str();
  // The same node twice still merges.
  Builder b2;
  int y = b2.input({2, 6});
  auto s1 = b2.node_n("Split", {y}, 2, {{"axis", int_attr(1)}});
  auto s2 = b2.node_n("Split", {y}, 2, {{"axis", int_attr(1)}});
  Graph g2 = optimize_and_check(b2.raw({b2.node("Add", {s1[0], s2[1]})}));
  auto ops2 = ops_of(g2);
  EXPECT_EQ(std::count(ops2.begin(), ops2.end(), "Split"), 1) << g2.str();
}

TEST(Passes, ReshapeChainsBecomeOneReshape) {
  Builder b;
  int x = b.input({2, 3, 4});
  int r1 = b.node("Reshape", {x, b.i64s({6, 4})});
  int u = b.node("Unsqueeze", {r1, b.i64s({0})});   // 1x6x4
  int f = b.node("Flatten", {u}, {{"axis", int_attr(2)}});  // 6x4
  int sq = b.node("Reshape", {f, b.i64s({24})});
  int e = b.node("Exp", {sq});
  int same = b.node("Reshape", {e, b.i64s({-1})});  // 24 -> 24: removed
  Graph g = optimize_and_check(b.raw({b.node("Relu", {same})}));
  EXPECT_EQ(ops_of(g), (Ops{"Reshape", "Exp", "Relu"})) << g.str();
}

TEST(Passes, TransposePairsCancelThroughElementwiseOps) {
  Builder b;
  int x = b.input({2, 3, 4});
  int t1 = b.node("Transpose", {x}, {{"perm", ints({2, 0, 1})}});  // 4x2x3
  int r = b.node("Relu", {t1});
  int e = b.node("Sigmoid", {r});
  int t2 = b.node("Transpose", {e}, {{"perm", ints({1, 2, 0})}});  // back to 2x3x4
  Graph g = optimize_and_check(b.raw({b.node("Add", {t2, x})}));
  EXPECT_EQ(ops_of(g), (Ops{"Relu", "Sigmoid", "Add"})) << g.str();
}

TEST(Passes, TransposePairsCompose) {
  Builder b;
  int x = b.input({2, 3, 4});
  int t1 = b.node("Transpose", {x}, {{"perm", ints({1, 0, 2})}});
  int t2 = b.node("Transpose", {t1}, {{"perm", ints({0, 2, 1})}});
  Graph g = optimize_and_check(b.raw({b.node("Relu", {t2})}));
  EXPECT_EQ(ops_of(g), (Ops{"Transpose", "Relu"})) << g.str();
  // A lone transpose followed by elementwise ops stays where it is.
  Builder b2;
  int y = b2.input({2, 3});
  int t = b2.node("Transpose", {y});
  Graph g2 = optimize_and_check(b2.raw({b2.node("Exp", {b2.node("Relu", {t})})}));
  EXPECT_EQ(ops_of(g2), (Ops{"Transpose", "Relu", "Exp"})) << g2.str();
}

// x * sigmoid(x) (SiLU, in either operand order) is one op, which fusion takes into the conv
// producing x; a Sigmoid read elsewhere too, or of another value, stays.
TEST(Passes, MulOfASigmoidOfItsOperandIsOneSilu) {
  Builder b;
  int x = b.input({1, 8, 4, 4});
  int c = b.node("Conv", {x, b.weight({8, 8, 1, 1})});
  int m1 = b.node("Mul", {c, b.node("Sigmoid", {c})});
  int m2 = b.node("Mul", {b.node("Sigmoid", {m1}), m1});
  Graph g = optimize_and_check(b.raw({m2}));
  EXPECT_EQ(ops_of(g), (Ops{"Conv", "tuner.Silu", "tuner.Silu"})) << g.str();

  Builder b2;
  int y = b2.input({2, 3}), z = b2.input({2, 3});
  int s = b2.node("Sigmoid", {y});
  int k1 = b2.node("Mul", {y, s});
  int k2 = b2.node("Mul", {z, b2.node("Sigmoid", {y})});
  Graph g2 = optimize_and_check(b2.raw({k1, k2, s}));  // s is an output too
  EXPECT_EQ(ops_of(g2), (Ops{"Sigmoid", "Mul", "Mul"})) << g2.str();  // one Sigmoid after CSE
}

// Hardswish as PyTorch exports it below opset 14 (HardSigmoid with alpha 1/6, then Mul): one
// tuner.HardSwish keeping HardSigmoid's alpha and beta, the same values as before.
TEST(Passes, MulOfAHardSigmoidOfItsOperandIsOneHardSwish) {
  Builder b;
  int x = b.input({1, 8, 4, 4});
  int c = b.node("Conv", {x, b.weight({8, 8, 1, 1}, 4.0)});
  Attr alpha, beta;
  alpha.kind = beta.kind = Attr::Float;
  alpha.f = 1.0 / 6, beta.f = 0.4;
  int h = b.node("HardSigmoid", {c}, {{"alpha", alpha}, {"beta", beta}});
  Graph raw = b.raw({b.node("Mul", {h, c})});
  Graph g = optimize_and_check(raw);
  EXPECT_EQ(ops_of(g), (Ops{"Conv", "tuner.HardSwish"})) << g.str();
  Rng rng(8);
  expect_same_outputs(raw, g, {ops::HostTensor::random({1, 8, 4, 4}, te::DataType::f32(), rng)});
}

// PyTorch's exported GELU, 0.5 x (1 + erf(x / sqrt 2)) in its orders (the 0.5 last or first,
// Div by sqrt 2 or Mul by its inverse), is one op fused into the product computing x; with an
// inner value read elsewhere, or another constant, it stays.
TEST(Passes, ExportedGeluIsOneOp) {
  Builder b;
  int x = b.input({4, 8});
  int m = b.node("MatMul", {x, b.weight({8, 8})});
  auto one_plus_erf = [&](Builder& bb, int v, bool div) {
    int scaled = div ? bb.node("Div", {v, bb.fill({}, std::sqrt(2.0))})
                     : bb.node("Mul", {bb.fill({}, M_SQRT1_2), v});
    return bb.node("Add", {bb.node("Erf", {scaled}), bb.fill({}, 1.0)});
  };
  int g1 = b.node("Mul", {b.node("Mul", {m, one_plus_erf(b, m, true)}), b.fill({}, 0.5)});
  int g2 = b.node("Mul", {one_plus_erf(b, g1, false), b.node("Mul", {b.fill({}, 0.5), g1})});
  Graph g = optimize_and_check(b.raw({g2}));
  EXPECT_EQ(ops_of(g), (Ops{"MatMul", "tuner.Gelu", "tuner.Gelu"})) << g.str();

  Builder b2;
  int y = b2.input({4, 8});
  int e = one_plus_erf(b2, y, true);
  int k1 = b2.node("Mul", {b2.node("Mul", {y, e}), b2.fill({}, 0.5)});
  int k2 = b2.node("Mul", {b2.node("Mul", {y, one_plus_erf(b2, y, false)}), b2.fill({}, 0.25)});
  Graph h = optimize_and_check(b2.raw({k1, k2, e}));  // e is an output too
  for (const std::string& op : ops_of(h)) EXPECT_NE(op, "tuner.Gelu") << h.str();
}

TEST(Passes, MonotonicActivationMovesAfterMaxPool) {
  Builder b;
  int x = b.input({1, 4, 8, 8});
  int c = b.node("Conv", {x, b.weight({4, 4, 3, 3})}, {{"pads", ints({1, 1, 1, 1})}});
  int r = b.node("Relu", {c});
  int p = b.node("MaxPool", {r}, {{"kernel_shape", ints({3, 3})}, {"strides", ints({2, 2})},
                                  {"pads", ints({1, 1, 1, 1})}});
  Graph g = optimize_and_check(b.raw({p}));
  EXPECT_EQ(ops_of(g), (Ops{"Conv", "MaxPool", "Relu"})) << g.str();

  // ceil_mode: a window may hold only padding; left alone. A non-monotonic one too.
  Builder b2;
  int y = b2.input({1, 2, 5, 5});
  int s = b2.node("Sigmoid", {y});
  int p2 = b2.node("MaxPool", {s}, {{"kernel_shape", ints({2, 2})}, {"strides", ints({2, 2})},
                                    {"ceil_mode", int_attr(1)}});
  int h = b2.node("HardSwish", {y});
  int p3 = b2.node("MaxPool", {h}, {{"kernel_shape", ints({2, 2})}});
  Graph g2 = optimize_and_check(b2.raw({p2, p3}));
  EXPECT_EQ(ops_of(g2), (Ops{"Sigmoid", "MaxPool", "HardSwish", "MaxPool"})) << g2.str();

  // Dilation can leave a window in the padding too: kept
  // (kernel 2, dilation 3, pads 1 on a 2-wide axis read only -1 and 2; relu after the pool
  // gave 0 there, -inf before it).
  Builder b3;
  int z = b3.input({1, 2, 2, 2});
  int r3 = b3.node("Relu", {z});
  int p4 = b3.node("MaxPool", {r3}, {{"kernel_shape", ints({2, 2})}, {"dilations", ints({3, 3})},
                                     {"pads", ints({1, 1, 1, 1})}});
  Graph g3 = optimize_and_check(b3.raw({p4}));
  EXPECT_EQ(ops_of(g3), (Ops{"Relu", "MaxPool"})) << g3.str();
}

TEST(Passes, ConvWeightsArePackedForTheTarget) {
  Builder b;
  int x = b.input({1, 8, 6, 6});
  int c32 = b.node("Conv", {x, b.weight({32, 8, 3, 3}), b.weight({32})},
                   {{"pads", ints({1, 1, 1, 1})}});
  int c24 = b.node("Conv", {c32, b.weight({24, 32, 1, 1})});  // 24: blocks of 8 lanes
  // Groups of 8 output channels: packed by 8; of 4, or depthwise: kept.
  int g2 = b.node("Conv", {c24, b.weight({16, 12, 1, 1})}, {{"group", int_attr(2)}});
  int g4 = b.node("Conv", {g2, b.weight({16, 4, 1, 1})}, {{"group", int_attr(4)}});
  int dw = b.node("Conv", {g4, b.weight({16, 1, 3, 3})}, {{"group", int_attr(16)}, {"pads", ints({1, 1, 1, 1})}});
  int c5 = b.node("Conv", {dw, b.weight({5, 16, 1, 1})});  // 5 channels: kept
  int wide = b.input({1, 4, 2, 16});
  int pw = b.node("Conv", {wide, b.weight({16, 4, 1, 1})});  // 1x1 over 16-wide rows: kept
  int pw2 = b.node("Conv", {pw, b.weight({16, 16, 1, 1})}, {{"strides", ints({2, 2})}});  // strided: packed
  // Rows narrower than two vectors: 1x1 convs expanding or projecting the channels are packed.
  int mid = b.input({1, 8, 2, 6}), narrow = b.input({1, 8, 2, 4});
  int expand = b.node("Conv", {mid, b.weight({32, 8, 1, 1})});
  int project = b.node("Conv", {expand, b.weight({8, 32, 1, 1})});
  int expand4 = b.node("Conv", {narrow, b.weight({32, 8, 1, 1})});
  Graph raw = b.raw({c5, pw2, project, expand4});
  Graph g = for_target(raw, 8);
  std::vector<ops::Shape> weights;
  for (const Node& n : g.nodes)
    if (!n.dead && n.op == "Conv") weights.push_back(g.values[size_t(n.inputs[1])].shape);
  EXPECT_EQ(weights, (std::vector<ops::Shape>{{2, 8, 3, 3, 16},
                                              {3, 32, 1, 1, 8},
                                              {2, 12, 1, 1, 8},
                                              {16, 4, 1, 1},
                                              {16, 1, 3, 3},
                                              {5, 16, 1, 1},
                                              {16, 4, 1, 1},
                                              {1, 16, 1, 1, 16},
                                              {2, 8, 1, 1, 16},
                                              {1, 32, 1, 1, 8},
                                              {2, 8, 1, 1, 16}}));
  Rng rng(3);
  std::vector<ops::HostTensor> ins;
  for (ops::Shape s : {ops::Shape{1, 8, 6, 6}, {1, 4, 2, 16}, {1, 8, 2, 6}, {1, 8, 2, 4}})
    ins.push_back(ops::HostTensor::random(s, te::DataType::f32(), rng));
  expect_same_outputs(raw, g, ins);
  // Without a target's lanes the ONNX layout stays.
  Graph plain = raw;
  run_passes(plain);
  for (const Node& n : plain.nodes) {
    if (!n.dead && n.op == "Conv") {
      EXPECT_EQ(plain.values[size_t(n.inputs[1])].shape.size(), 4u);
    }
  }
}

// With AVX2's 16 registers (12 accumulators) a 7-wide output fits one row of two 8-lane
// vectors in the tile but 7 rows of one: packed by 8; a 12-wide one takes 6 rows of two.
// With 32 registers both take two vectors. 1x1 convs with 16 registers: an expansion over
// 14-wide rows is packed (with 32 too), one over rows of 8 vectors stays plain; over rows of
// 4 vectors (32 wide) it is packed by two vectors, and stays plain where one would be taken.
TEST(Passes, ConvWeightBlocksFillTheRegisterTile) {
  Builder b;
  int x7 = b.input({1, 8, 7, 7}), x12 = b.input({1, 8, 12, 12});
  int c7 = b.node("Conv", {x7, b.weight({32, 8, 3, 3})}, {{"pads", ints({1, 1, 1, 1})}});
  int c12 = b.node("Conv", {x12, b.weight({32, 8, 3, 3})}, {{"pads", ints({1, 1, 1, 1})}});
  int x14 = b.input({1, 8, 2, 14}), x64 = b.input({1, 8, 2, 64}), x32 = b.input({1, 8, 2, 32});
  int e14 = b.node("Conv", {x14, b.weight({32, 8, 1, 1})});
  int e64 = b.node("Conv", {x64, b.weight({32, 8, 1, 1})});
  int e32 = b.node("Conv", {x32, b.weight({32, 8, 1, 1})});
  int p32 = b.node("Conv", {x32, b.weight({24, 8, 1, 1})});
  Graph raw = b.raw({c7, c12, e14, e64, e32, p32});
  auto blocks = [&](int registers) {
    Graph g = for_target(raw, 8, registers);
    std::vector<int64_t> out;
    for (const Node& n : g.nodes)
      if (!n.dead && n.op == "Conv") out.push_back(g.values[size_t(n.inputs[1])].shape.back());
    return out;
  };
  EXPECT_EQ(blocks(16), (std::vector<int64_t>{8, 16, 8, 1, 16, 1}));  // 1: plain [K, C, 1, 1]
  EXPECT_EQ(blocks(32), (std::vector<int64_t>{16, 16, 16, 1, 1, 1}));
  Rng rng(5);
  expect_same_outputs(raw, for_target(raw, 8, 16),
                      {ops::HostTensor::random({1, 8, 7, 7}, te::DataType::f32(), rng),
                       ops::HostTensor::random({1, 8, 12, 12}, te::DataType::f32(), rng),
                       ops::HostTensor::random({1, 8, 2, 14}, te::DataType::f32(), rng),
                       ops::HostTensor::random({1, 8, 2, 64}, te::DataType::f32(), rng),
                       ops::HostTensor::random({1, 8, 2, 32}, te::DataType::f32(), rng)});
}

// 16 lanes: groups of 8 output channels pack by half vectors when strided, stay plain at
// stride 1; groups of 16 pack by whole vectors either way.
TEST(Passes, StridedGroupsOfHalfAVectorPackByHalfVectors) {
  Builder b;
  int x = b.input({1, 32, 8, 8});
  Attr g4;
  g4.i = 4;
  auto conv = [&](int in, int64_t k, int64_t stride, Attr groups) {
    return b.node("Conv", {in, b.weight({k, 8, 3, 3})},
                  {{"group", groups}, {"pads", ints({1, 1, 1, 1})}, {"strides", ints({stride, stride})}});
  };
  int s2 = conv(x, 32, 2, g4), s1 = conv(x, 32, 1, g4), wide = conv(x, 64, 1, g4);
  Graph raw = b.raw({s2, s1, wide});
  Graph g = for_target(raw, 16);
  std::vector<ops::Shape> weights;
  for (const Node& n : g.nodes)
    if (!n.dead && n.op == "Conv") weights.push_back(g.values[size_t(n.inputs[1])].shape);
  EXPECT_EQ(weights, (std::vector<ops::Shape>{{4, 8, 3, 3, 8}, {32, 8, 3, 3}, {4, 8, 3, 3, 16}}));
  Rng rng(6);
  expect_same_outputs(raw, g, {ops::HostTensor::random({1, 32, 8, 8}, te::DataType::f32(), rng)});
}

// Output channels no block of one or two vectors divides: computed up to whole blocks when
// that wastes at most 1/16 (250 -> 256 with 8 lanes, then packed by 16) and sliced back; 36
// channels (-> 48 would waste a third) stay as they are. Same outputs either way.
TEST(Passes, ConvOutputChannelsArePaddedToWholeBlocks) {
  Builder b;
  int x = b.input({1, 8, 3, 5});
  int wide = b.node("Conv", {x, b.weight({250, 8, 1, 1}), b.weight({250})});
  int relu = b.node("Relu", {wide});
  int narrow = b.node("Conv", {relu, b.weight({36, 250, 1, 1})});
  Graph raw = b.raw({narrow});
  Graph g = for_target(raw, 8);
  std::vector<ops::Shape> weights;
  int slices = 0;
  for (const Node& n : g.nodes) {
    if (n.dead) continue;
    if (n.op == "Conv") weights.push_back(g.values[size_t(n.inputs[1])].shape);
    slices += n.op == "Slice";
  }
  EXPECT_EQ(weights, (std::vector<ops::Shape>{{16, 8, 1, 1, 16}, {36, 250, 1, 1}})) << g.str();
  EXPECT_EQ(slices, 1);
  Rng rng(9);
  expect_same_outputs(raw, g, {ops::HostTensor::random({1, 8, 3, 5}, te::DataType::f32(), rng)});
}

// 16 lanes, 32 registers: a 1x1 conv expanding fewer than 64 channels over 28-wide rows (16
// + 12 lanes) stays plain; over 24-wide rows, projecting, or from 64 channels it is packed.
TEST(Passes, ShortExpansionsOver28WideRowsStayPlain) {
  Builder b;
  int x28 = b.input({1, 16, 2, 28}), x24 = b.input({1, 16, 2, 24}), w28 = b.input({1, 64, 2, 28});
  int e28 = b.node("Conv", {x28, b.weight({64, 16, 1, 1})});
  int e24 = b.node("Conv", {x24, b.weight({64, 16, 1, 1})});
  int p28 = b.node("Conv", {x28, b.weight({16, 16, 1, 1})});  // not expanding
  int wide = b.node("Conv", {w28, b.weight({128, 64, 1, 1})});  // 64 input channels
  Graph raw = b.raw({e28, e24, p28, wide});
  Graph g = for_target(raw, 16, 32);
  std::vector<size_t> ranks;
  for (const Node& n : g.nodes)
    if (!n.dead && n.op == "Conv") ranks.push_back(g.values[size_t(n.inputs[1])].shape.size());
  EXPECT_EQ(ranks, (std::vector<size_t>{4, 5, 5, 5}));  // 4: plain [K, C, 1, 1]
  Rng rng(6);
  expect_same_outputs(raw, g,
                      {ops::HostTensor::random({1, 16, 2, 28}, te::DataType::f32(), rng),
                       ops::HostTensor::random({1, 16, 2, 24}, te::DataType::f32(), rng),
                       ops::HostTensor::random({1, 64, 2, 28}, te::DataType::f32(), rng)});
}

TEST(Passes, GemmWeightsAreTransposedForTheTarget) {
  Builder b;
  int x = b.input({3, 5});
  int g1 = b.node("Gemm", {x, b.weight({4, 5}), b.weight({4})}, {{"transB", int_attr(1)}});
  int g2 = b.node("Gemm", {g1, b.weight({4, 6})});                             // already [k, n]
  int g3 = b.node("Gemm", {g2, g2}, {{"transB", int_attr(1)}});  // B not constant: kept
  // One row of A: with k two whole vectors the outputs are dot products of B's rows (kept);
  // with k = 5 the tiled kernel reads B [k, n] (transposed).
  int row16 = b.input({1, 16}), row5 = b.input({1, 5});
  int g4 = b.node("Gemm", {row16, b.weight({4, 16})}, {{"transB", int_attr(1)}});
  int g5 = b.node("Gemm", {row5, b.weight({4, 5})}, {{"transB", int_attr(1)}});
  Graph raw = b.raw({g3, g4, g5});
  Graph g = for_target(raw, 8);
  EXPECT_EQ(b_and_attr(g, {"Gemm"}, "transB"),
            (BAttrs{{{5, 4}, 0}, {{4, 6}, 0}, {{3, 6}, 1}, {{4, 16}, 1}, {{5, 4}, 0}}));
  Rng rng(3);
  expect_same_outputs(raw, g, {ops::HostTensor::random({3, 5}, te::DataType::f32(), rng),
                               ops::HostTensor::random({1, 16}, te::DataType::f32(), rng),
                               ops::HostTensor::random({1, 5}, te::DataType::f32(), rng)});
}

TEST(Passes, MatMulWeightsArePackedIntoColumnPanels) {
  Builder b;
  int x3 = b.input({2, 3, 5}), x2 = b.input({3, 5}), row = b.input({1, 5});
  int shared = b.weight({5, 16});
  int m1 = b.node("MatMul", {x3, shared});                                     // [1, 5, 16]
  int m0 = b.node("MatMul", {x2, shared});                                     // the same panels
  int m2 = b.node("MatMul", {row, b.weight({5, 16})});                         // one row: packed too
  int m3 = b.node("MatMul", {x2, b.weight({5, 12})});                          // 12 columns: kept
  int m4 = b.node("MatMul", {x2, b.node("Transpose", {x2})});                  // B not constant
  int g1 = b.node("Gemm", {x2, b.weight({5, 8}), b.weight({8})});              // [1, 5, 8]
  int g2 = b.node("Gemm", {x2, b.weight({16, 5})}, {{"transB", int_attr(1)}});  // transposed, then [1, 5, 16]
  Graph raw = b.raw({m1, m0, m2, m3, m4, g1, g2});
  Graph g = for_target(raw, 8);
  EXPECT_EQ(b_and_attr(g, {"MatMul", "Gemm"}, "b_block"),
            (BAttrs{{{1, 5, 16}, 16}, {{1, 5, 16}, 16}, {{1, 5, 16}, 16}, {{5, 12}, 0}, {{5, 3}, 0}, {{1, 5, 8}, 8},
                    {{1, 5, 16}, 16}}));
  std::set<int> shared_bs;  // a B read by two nodes is packed once
  for (const Node& n : g.nodes)
    if (!n.dead && n.op == "MatMul" && n.attrs.count("b_block") && g.values[size_t(n.inputs[0])].shape.size() >= 2 &&
        g.values[size_t(n.inputs[0])].shape[0] != 1 && g.values[size_t(n.inputs[1])].shape == ops::Shape{1, 5, 16})
      shared_bs.insert(n.inputs[1]);
  EXPECT_EQ(shared_bs.size(), 1u);
  Rng rng(4);
  std::vector<ops::HostTensor> ins;
  for (ops::Shape s : {ops::Shape{2, 3, 5}, {3, 5}, {1, 5}}) ins.push_back(ops::HostTensor::random(s, te::DataType::f32(), rng));
  expect_same_outputs(raw, g, ins);
}

// A squeeze-and-excite scale s [1, C, 1, 1] on the input of a conv with constant weights is
// folded into the weights (packed ones too) when they are smaller than the map: the Mul over
// the map is gone. Over a 2x2 map (weights larger) it stays.
TEST(Passes, ChannelScalesFoldIntoConvWeights) {
  Builder b;
  auto se = [&](const ops::Shape& shape, int64_t k) {
    int h = b.input(shape);
    int gate = b.node("Sigmoid", {b.node("GlobalAveragePool", {h})});
    return b.node("Conv", {b.node("Mul", {h, gate}), b.weight({k, shape[1], 1, 1})});
  };
  int big = se({1, 16, 6, 6}, 32), small = se({1, 16, 2, 2}, 32);
  Graph raw = b.raw({big, small});
  Graph g = for_target(raw, 16);
  int maps = 0;
  for (const Node& n : g.nodes)
    if (!n.dead && n.op == "Mul") maps += g.values[size_t(n.outputs[0])].shape.size() == 4 &&
                                          g.values[size_t(n.outputs[0])].shape[2] > 1;
  EXPECT_EQ(maps, 1) << g.str();  // the 2x2 one
  EXPECT_EQ(ops_of(g), (Ops{"GlobalAveragePool", "Sigmoid", "Reshape", "Mul", "Conv", "GlobalAveragePool",
                            "Sigmoid", "Mul", "Conv"}))
      << g.str();
  Rng rng(12);
  expect_same_outputs(raw, g, {ops::HostTensor::random({1, 16, 6, 6}, te::DataType::f32(), rng),
                               ops::HostTensor::random({1, 16, 2, 2}, te::DataType::f32(), rng)});
}

// Constant W and R of recurrent layers: transposed to [dirs, k, gates x hidden] and marked;
// an LSTM whose R is an input keeps ONNX's layout. Same outputs either way.
// Constant W and R are transposed, or packed into column panels when a block of 2 x lanes
// (else lanes) divides the hidden size; the layers compute the same.
TEST(Passes, RecurrentWeightsAreTransposedOrPacked) {
  Builder b;
  int x = b.input({5, 2, 3});
  Attr hidden, both, h16, h8;
  hidden.i = 4;
  h16.i = 16;
  h8.i = 8;
  both.kind = Attr::String;
  both.s = "bidirectional";
  int gru = b.node("GRU", {x, b.weight({2, 12, 3}), b.weight({2, 12, 4}), b.weight({2, 24})},
                   {{"hidden_size", hidden}, {"direction", both}});
  int r = b.input({1, 16, 4});
  int lstm = b.node("LSTM", {x, b.weight({1, 16, 3}), r}, {{"hidden_size", hidden}});
  int gru16 = b.node("GRU", {x, b.weight({2, 48, 3}, 0.3), b.weight({2, 48, 16}, 0.3), b.weight({2, 96})},
                     {{"hidden_size", h16}, {"direction", both}, {"linear_before_reset", int_attr(1)}});
  int lstm8 = b.node("LSTM", {x, b.weight({1, 32, 3}, 0.3), b.weight({1, 32, 8}, 0.3)}, {{"hidden_size", h8}});
  Graph raw = b.raw({gru, lstm, gru16, lstm8});
  Graph g = for_target(raw, 8);
  EXPECT_EQ(b_and_attr(g, {"GRU", "LSTM"}, "tuner_weights_kn"),
            (BAttrs{{{2, 3, 12}, 1}, {{1, 16, 3}, 0}, {{2, 3, 3, 16}, 1}, {{1, 4, 3, 8}, 1}}));
  EXPECT_EQ(b_and_attr(g, {"GRU", "LSTM"}, "tuner_weights_block"),
            (BAttrs{{{2, 3, 12}, 0}, {{1, 16, 3}, 0}, {{2, 3, 3, 16}, 16}, {{1, 4, 3, 8}, 8}}));
  Rng rng(4);
  expect_same_outputs(raw, g, {ops::HostTensor::random({5, 2, 3}, te::DataType::f32(), rng),
                               ops::HostTensor::random({1, 16, 4}, te::DataType::f32(), rng)});
}

TEST(Passes, ModelOutputsKeepTheirValues) {
  // A value that is a model output is never replaced, even by an equal one.
  Builder b;
  int x = b.input({4});
  int m = b.node("Mul", {x, b.fill({4}, 1.0)});
  int t = b.node("Reshape", {m, b.i64s({4})});
  Graph g = optimize_and_check(b.raw({m, t}));
  EXPECT_EQ(g.outputs.size(), 2u);
  EXPECT_EQ(ops_of(g), (Ops{"Mul", "Reshape"})) << g.str();
}

}  // namespace tuner::graph

namespace tuner::graph {

// Winograd: the qualifying 3x3 convs become Winograd convs and compute the same (within
// F(4x4, 3x3)'s rounding); others stay direct convs.
TEST(Passes, WinogradConvsComputeTheSameConv) {
  test::Builder b;
  // Weights scaled like a trained net's (~1/sqrt(fan-in)): activations stay near 1 through
  // the chain, so the comparison sees the transforms' rounding, not growth.
  auto w = [&](int64_t k, int64_t c) { return b.weight({k, c, 3, 3}, 1.5 / std::sqrt(9.0 * double(c))); };
  int x = b.input({1, 16, 22, 22});
  int narrow = b.node("Conv", {x, w(64, 16)}, {{"pads", test::ints({1, 1, 1, 1})}});  // kept
  int w1 = b.node("Conv", {narrow, w(64, 64), b.weight({64})}, {{"pads", test::ints({1, 1, 1, 1})}});
  int w2 = b.node("Conv", {w1, w(64, 64)}, {{"pads", test::ints({0, 1, 2, 1})}});  // 6 x 6 tiles
  int strided = b.node("Conv", {w2, w(64, 64)}, {{"strides", test::ints({2, 2})}});  // kept
  int few = b.node("Conv", {strided, w(64, 64)});  // 2 x 2 tiles: kept
  Graph raw = b.raw({few});
  Graph g = raw;
  PassOptions po;
  po.vector_lanes = 8;
  po.vector_registers = 32;
  po.winograd = true;
  run_passes(g, po);
  std::multiset<std::string> ops;
  for (const Node& n : g.nodes)
    if (!n.dead) ops.insert(n.op);
  EXPECT_EQ(ops.count("tuner.WinogradConv"), 2u) << g.str();
  EXPECT_EQ(ops.count("Conv"), 3u);
  Rng rng(3);
  std::vector<ops::HostTensor> in = {ops::HostTensor::random({1, 16, 22, 22}, te::DataType::f32(), rng)};
  std::vector<ops::HostTensor> want = evaluate_graph(raw, in), got = evaluate_graph(g, in);
  ASSERT_EQ(got.size(), 1u);
  auto cmp = ops::compare(got[0], want[0], 1e-4, 1e-4);
  EXPECT_EQ(cmp.mismatches, 0) << cmp.message;
  // 4 x 4 tiles (13x13): 64 input channels are too few for the transforms to pay (kept), 128
  // enough.
  test::Builder b13;
  int x13 = b13.input({1, 64, 13, 13});
  int c64 = b13.node("Conv", {x13, b13.weight({64, 64, 3, 3})}, {{"pads", test::ints({1, 1, 1, 1})}});
  int cat = b13.node("Concat", {c64, x13}, {{"axis", test::int_attr(1)}});
  int c128 = b13.node("Conv", {cat, b13.weight({64, 128, 3, 3})}, {{"pads", test::ints({1, 1, 1, 1})}});
  Graph g13 = b13.raw({c128});
  run_passes(g13, po);
  std::vector<std::string> convs;
  for (const Node& n : g13.nodes)
    if (!n.dead && n.op != "Concat") convs.push_back(n.op);
  EXPECT_EQ(convs, (std::vector<std::string>{"Conv", "tuner.WinogradConv"})) << g13.str();
  // Turned off: the same passes keep direct convs.
  Graph plain = raw;
  po.winograd = false;
  run_passes(plain, po);
  for (const Node& n : plain.nodes) EXPECT_EQ(n.op.rfind("tuner.", 0), std::string::npos) << n.op;
}

}  // namespace tuner::graph
