// Fusion rules and task extraction on small hand-built graphs.
#include <gtest/gtest.h>

#include <set>

#include "graph/infer.h"
#include "graph/passes.h"
#include "graph/tasks.h"
#include "support/rng.h"

namespace tuner::graph {

namespace {

struct Builder {
  Graph g;
  Rng rng{1};
  Builder() { g.opset = 13; }

  int input(const ops::Shape& s) {
    Value v;
    v.name = "x" + std::to_string(g.values.size());
    v.shape = s;
    int id = g.add_value(v);
    g.inputs.push_back(id);
    return id;
  }
  int weight(const ops::Shape& s) {
    return g.add_constant("w" + std::to_string(g.values.size()),
                          ops::HostTensor::random(s, te::DataType::f32(), rng));
  }
  int node(const std::string& op, std::vector<int> ins, std::map<std::string, Attr> attrs = {}) {
    Value v;
    v.name = op + std::to_string(g.values.size());
    int out = g.add_value(v);
    Node n;
    n.op = op;
    n.name = v.name;
    n.inputs = std::move(ins);
    n.outputs = {out};
    n.attrs = std::move(attrs);
    g.add_node(std::move(n));
    return out;
  }
  Graph done(std::vector<int> outputs) {
    g.outputs = std::move(outputs);
    infer_and_fold(g);
    run_passes(g);
    return g;
  }
};

Attr ints(std::vector<int64_t> v) {
  Attr a;
  a.kind = Attr::Ints;
  a.ints = std::move(v);
  return a;
}

// Every group reads only values computed by earlier groups (or model inputs/constants).
void expect_topological(const Graph& g, const std::vector<Group>& groups) {
  std::set<int> ready(g.inputs.begin(), g.inputs.end());
  for (size_t v = 0; v < g.values.size(); ++v)
    if (g.values[v].is_constant()) ready.insert(int(v));
  for (const Group& grp : groups) {
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

TEST(Fusion, ReductionTakesItsInjectiveProducer) {
  Builder b;
  int x = b.input({4, 16});
  int out = b.node("Softmax", {b.node("Mul", {x, b.weight({16})})}, {});
  Graph g = b.done({out});
  TaskSet ts = extract_tasks(g);
  ASSERT_EQ(ts.groups.size(), 1u);
  EXPECT_EQ(ts.groups[0].ops(g), "Mul+Softmax");
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
