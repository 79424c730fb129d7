// A small builder of hand-made graphs for the graph tests.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/infer.h"
#include "graph/passes.h"
#include "support/rng.h"

namespace tuner::graph::test {

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
  /// A float32 constant, uniform in [-scale, scale].
  int weight(const ops::Shape& s, double scale = 1.0) {
    return g.add_constant("w" + std::to_string(g.values.size()),
                          ops::HostTensor::random(s, te::DataType::f32(), rng, -scale, scale));
  }
  int constant(ops::HostTensor t) {
    return g.add_constant("c" + std::to_string(g.values.size()), std::move(t));
  }
  /// A float32 constant of `shape` filled with v.
  int fill(const ops::Shape& shape, double v) {
    ops::HostTensor t(shape, te::DataType::f32());
    for (int64_t i = 0; i < t.num_elements(); ++i) t.set(i, v);
    return constant(std::move(t));
  }
  /// An int64 vector constant (shapes, axes).
  int i64s(const std::vector<int64_t>& v) {
    ops::HostTensor t({int64_t(v.size())}, te::DataType::i64());
    for (size_t i = 0; i < v.size(); ++i) t.set_int(int64_t(i), v[i]);
    return constant(std::move(t));
  }
  /// A node with one output; its value id.
  int node(const std::string& op, std::vector<int> ins, std::map<std::string, Attr> attrs = {}) {
    return node_n(op, std::move(ins), 1, std::move(attrs))[0];
  }
  /// A node with `n_out` outputs; their value ids.
  std::vector<int> node_n(const std::string& op, std::vector<int> ins, size_t n_out,
                          std::map<std::string, Attr> attrs = {}) {
    Node n;
    n.op = op;
    n.name = op + std::to_string(g.values.size());
    for (size_t k = 0; k < n_out; ++k) {
      Value v;  // one output: named as its node
      v.name = n_out == 1 ? n.name : n.name + "_" + std::to_string(k);
      n.outputs.push_back(g.add_value(v));
    }
    n.inputs = std::move(ins);
    n.attrs = std::move(attrs);
    std::vector<int> outs = n.outputs;
    g.add_node(std::move(n));
    return outs;
  }
  /// The graph with these outputs, shapes inferred, before any pass.
  Graph raw(std::vector<int> outputs) {
    g.outputs = std::move(outputs);
    infer_and_fold(g);
    return g;
  }
  /// The graph with these outputs after every pass.
  Graph done(std::vector<int> outputs) {
    Graph r = raw(std::move(outputs));
    run_passes(r);
    return r;
  }
};

inline Attr ints(std::vector<int64_t> v) { return ints_attr(std::move(v)); }

inline Attr float_attr(double v) {
  Attr a;
  a.kind = Attr::Float;
  a.f = v;
  return a;
}

inline Attr int_attr(int64_t v) {
  Attr a;
  a.kind = Attr::Int;
  a.i = v;
  return a;
}

}  // namespace tuner::graph::test
