// Fusion rules and task extraction on small hand-built graphs.
#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "graph/tasks.h"
#include "unit/graph/graph_builder.h"

namespace tuner::graph {

namespace {

using test::Builder;
using test::ints;

// Every group reads only values computed by earlier groups (or model inputs/constants, or
// in-place concats of those).
void expect_topological(const Graph& g, const std::vector<Group>& groups) {
  std::set<int> ready(g.inputs.begin(), g.inputs.end());
  for (size_t v = 0; v < g.values.size(); ++v)
    if (g.values[v].is_constant()) ready.insert(int(v));
  std::vector<int> concats = in_place_concats(g);
  for (const Group& grp : groups) {
    for (int ni : concats) {
      const Node& n = g.nodes[size_t(ni)];
      bool all = true;
      for (int v : n.inputs) all = all && ready.count(v);
      if (all) ready.insert(n.outputs[0]);
    }
    for (int v : grp.inputs) EXPECT_TRUE(ready.count(v)) << g.values[size_t(v)].name;
    for (int v : grp.outputs) ready.insert(v);
  }
}

}  // namespace

TEST(Fusion, ConvEpilogueAndResidual) {
  Builder b;
  int x = b.input({1, 8, 8, 8});
  int r1 = b.node("Relu", {b.node("Conv", {x, b.weight({8, 8, 3, 3})}, {{"pads", ints({1, 1, 1, 1})}})});
  int c2 = b.node("Conv", {r1, b.weight({8, 8, 3, 3}), b.weight({8})}, {{"pads", ints({1, 1, 1, 1})}});
  int out = b.node("Relu", {b.node("Add", {c2, r1})});
  Graph g = b.done({out});
  TaskSet ts = extract_tasks(g);
  ASSERT_EQ(ts.groups.size(), 2u);
  EXPECT_EQ(ts.groups[0].ops(g), "Conv+Relu");
  EXPECT_EQ(ts.groups[1].ops(g), "Conv+Add+Relu");
  expect_topological(g, ts.groups);
  // The second kernel reads the block input (residual), its weight and bias.
  EXPECT_EQ(ts.groups[1].inputs.size(), 3u);
  EXPECT_EQ(ts.tasks.size(), 2u);
}

TEST(Fusion, EqualGroupsShareATaskAndUnfusedIsOneKernelPerNode) {
  Builder b;
  int x = b.input({1, 8, 8, 8});
  int y = x;
  for (int i = 0; i < 3; ++i)
    y = b.node("Relu", {b.node("Conv", {y, b.weight({8, 8, 1, 1})})});
  Graph g = b.done({y});
  TaskSet ts = extract_tasks(g);
  EXPECT_EQ(ts.groups.size(), 3u);
  ASSERT_EQ(ts.tasks.size(), 1u);  // weights are arguments, so the three blocks are one task
  EXPECT_EQ(ts.tasks[0].weight, 3);
  FuseOptions off;
  off.enabled = false;
  EXPECT_EQ(extract_tasks(g, off).groups.size(), 6u);
}

// A channel concat at batch 1 is in place (no kernel: its inputs' kernels write their
// parts); not when its output is a model output, at batch 2 (parts not contiguous), when an
// input is a model input, or when a part would start off a 64-byte boundary.
TEST(Fusion, ConcatsOfKernelOutputsAreInPlace) {
  auto concat_of = [](const std::vector<int64_t>& shape, int64_t first_channels, bool to_output,
                      bool model_input) {
    Builder b;
    int x = b.input(shape);
    std::vector<int64_t> s1 = shape;
    s1[1] = first_channels;
    int a = b.node("Relu", {b.node("Conv", {x, b.weight({first_channels, shape[1], 1, 1})})});
    int c = b.node("Relu", {b.node("Conv", {x, b.weight({8, shape[1], 1, 1})})});
    int cat = b.node("Concat", {a, model_input ? x : c}, {{"axis", test::int_attr(1)}});
    int out = to_output ? cat : b.node("Conv", {cat, b.weight({4, first_channels + (model_input ? shape[1] : 8), 1, 1})});
    Graph g = b.done({out});
    TaskSet ts = extract_tasks(g);
    expect_topological(g, ts.groups);
    std::vector<std::string> ops;
    for (const Group& grp : ts.groups) ops.push_back(grp.ops(g));
    return std::pair{ts.in_place_concats.size(), ops};
  };
  auto [n, ops] = concat_of({1, 8, 4, 4}, 8, false, false);
  EXPECT_EQ(n, 1u);
  EXPECT_EQ(ops, (std::vector<std::string>{"Conv+Relu", "Conv+Relu", "Conv"}));
  EXPECT_EQ(concat_of({1, 8, 4, 4}, 8, true, false).first, 0u);   // a model output
  EXPECT_EQ(concat_of({2, 8, 4, 4}, 8, false, false).first, 0u);  // batch 2
  EXPECT_EQ(concat_of({1, 8, 4, 4}, 8, false, true).first, 0u);   // a model input
  EXPECT_EQ(concat_of({1, 8, 3, 5}, 3, false, false).first, 0u);  // 3 x 15 floats: 180 bytes
  EXPECT_EQ(concat_of({1, 8, 4, 4}, 1, false, false).first, 1u);  // 16 floats: 64 bytes
}

// A task's stages are named by position in its group, so its records (whose traces name
// stages) replay on the same task of another model, wherever the group sits in the graph.
TEST(Fusion, EqualTasksOfDifferentModelsNameTheirStagesAlike) {
  auto conv_relu = [](Builder& b, int x, int k) {
    int pad = k / 2;
    return b.node("Relu", {b.node("Conv", {x, b.weight({8, 8, k, k})},
                                  {{"pads", ints({pad, pad, pad, pad})}})});
  };
  Builder b1;
  Graph g1 = b1.done({conv_relu(b1, b1.input({1, 8, 8, 8}), 3)});
  Builder b2;
  int y = conv_relu(b2, b2.input({1, 8, 8, 8}), 1);
  Graph g2 = b2.done({conv_relu(b2, y, 3)});
  TaskSet t1 = extract_tasks(g1), t2 = extract_tasks(g2);
  ASSERT_EQ(t1.tasks.size(), 1u);
  ASSERT_EQ(t2.tasks.size(), 2u);
  const te::ComputeDAG &a = t1.tasks[0].dag, &c = t2.tasks[1].dag;
  ASSERT_EQ(a.hash_hex(), c.hash_hex());
  EXPECT_EQ(a.str(), c.str());  // names included
}

// A task is measured on the model's own weights (its first group's constants) and random
// values for everything else.
TEST(Fusion, TasksAreMeasuredOnTheModelsWeights) {
  Builder b;
  int x = b.input({1, 4, 5, 5});
  int w = b.weight({8, 4, 3, 3});
  int y = b.node("Relu", {b.node("Conv", {x, w})});
  Graph g = b.raw({y});
  TaskSet ts = extract_tasks(g);
  ASSERT_EQ(ts.tasks.size(), 1u);
  auto in = task_inputs(g, ts, 0, 7);
  ASSERT_EQ(in.size(), 2u);
  EXPECT_EQ(in[0].shape, (ops::Shape{1, 4, 5, 5}));
  EXPECT_EQ(std::memcmp(in[1].raw(), g.values[size_t(w)].data->raw(), in[1].bytes()), 0);
  EXPECT_NE(std::memcmp(in[0].raw(), task_inputs(g, ts, 0, 8)[0].raw(), in[0].bytes()), 0);  // seeded
}

TEST(Fusion, ReductionTakesItsInjectiveProducer) {
  Builder b;
  int x = b.input({4, 16});
  int out = b.node("Softmax", {b.node("Mul", {x, b.weight({16})})}, {});
  Graph g = b.done({out});
  TaskSet ts = extract_tasks(g);
  ASSERT_EQ(ts.groups.size(), 1u);
  EXPECT_EQ(ts.groups[0].ops(g), "Mul+Softmax");
}

// The integer products end in an injective requantization but are anchors: a QLinearConv
// after another starts its own kernel (it had joined the first and recomputed it per tap).
TEST(Fusion, IntegerProductsAreAnchors) {
  for (const char* op : {"QLinearConv", "ConvInteger", "QLinearMatMul", "MatMulInteger", "com.microsoft.QGemm"})
    EXPECT_EQ(fuse_pattern(op), FusePattern::Anchor) << op;
  EXPECT_EQ(fuse_pattern("com.microsoft.QLinearGlobalAveragePool"), FusePattern::Reduction);
  EXPECT_EQ(fuse_pattern("DynamicQuantizeLinear"), FusePattern::Reduction);
  EXPECT_EQ(fuse_pattern("com.microsoft.QLinearAdd"), FusePattern::Injective);
}

TEST(Fusion, SharedValuesAreNotFusedAwayAndOrderStaysTopological) {
  Builder b;
  int x = b.input({64});
  int r = b.node("Relu", {x});
  int e = b.node("Exp", {r});
  int n = b.node("Neg", {r});
  int out = b.node("Add", {e, n});
  Graph g = b.done({out, r});
  TaskSet ts = extract_tasks(g);
  expect_topological(g, ts.groups);
  // r is read twice and is a model output: its group ends there.
  EXPECT_EQ(ts.groups[0].ops(g), "Relu");
  size_t kernels_reading_r = 0;
  for (const Group& grp : ts.groups)
    for (int v : grp.inputs) kernels_reading_r += v == g.outputs[1];
  EXPECT_EQ(kernels_reading_r, 2u);
}

// Alternating reshapes and transposes inline into an index that grows exponentially with the
// chain (100 nodes on 120 elements took 24 GB to compile): a group takes at most
// max_reshapes reshapes, and the chain compiles in several kernels.
TEST(Fusion, AGroupTakesAFewReshapes) {
  Builder b;
  int y = b.input({2, 3, 4, 5});
  for (int i = 0; i < 10; ++i) {
    y = b.node("Transpose", {y}, {{"perm", ints({3, 2, 1, 0})}});
    y = b.node("Reshape", {y, b.i64s({2, 3, 4, 5})});  // of a 5x4x3x2
  }
  Graph g = b.done({y});
  std::vector<Group> groups = fuse(g);
  ASSERT_GE(groups.size(), 3u);
  for (const Group& grp : groups) {
    size_t n = 0;
    for (int m : grp.nodes) n += g.nodes[size_t(m)].op == "Reshape";
    EXPECT_LE(n, 4u) << grp.ops(g);  // FuseOptions::max_reshapes
  }
  expect_topological(g, groups);
}

TEST(Passes, IdentityCseAndDeadCode) {
  Builder b;
  int x = b.input({8});
  int i1 = b.node("Identity", {x});
  int a = b.node("Relu", {i1});
  int a2 = b.node("Relu", {x});  // the same as a once the identity is gone
  b.node("Exp", {x});            // unused
  int out = b.node("Add", {a, a2});
  Graph g = b.done({out});
  EXPECT_EQ(g.num_nodes(), 2u) << g.str();  // Relu, Add
}

}  // namespace tuner::graph
