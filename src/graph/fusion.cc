#include "graph/fusion.h"

#include <algorithm>
#include <set>

#include "graph/converters.h"
#include "support/error.h"

namespace tuner::graph {

FusePattern fuse_pattern(const std::string& op) {
  // A Winograd conv (graph/passes.h) takes the conv's epilogue, like a Conv; a recurrent
  // layer (its steps' products) is a kernel of its own. The integer products end in an
  // injective requantization but are products: taken for injective, a QLinearConv joined the
  // one before it and recomputed it per tap (QOperator resnet18 286 ms). DynamicQuantizeLinear
  // reduces its whole input (min and max) first: as an epilogue it halved the speed of the
  // product it joined (dynamically quantized bert_encoder's 128x256x1024, 0.99 -> 0.48 ms).
  // tuner.ByteWords reads 4 channels per element: a kernel of its own like a reduction, not
  // an epilogue splitting a conv's channel tile.
  static const std::set<std::string> anchors = {
      "Conv",         "ConvTranspose", "Gemm",         "MatMul",        "tuner.WinogradConv", "RNN",
      "GRU",          "LSTM",          "QLinearConv",  "ConvInteger",   "QLinearMatMul",      "MatMulInteger",
      "com.microsoft.QGemm"};
  static const std::set<std::string> reductions = {
      "ReduceSum",     "ReduceMean",        "ReduceMax",     "ReduceMin",  "Softmax",
      "LogSoftmax",    "LayerNormalization", "MaxPool",      "AveragePool", "GlobalAveragePool",
      "GlobalMaxPool", "com.microsoft.QLinearGlobalAveragePool", "DynamicQuantizeLinear", "tuner.ByteWords"};
  if (anchors.count(op)) return FusePattern::Anchor;
  if (reductions.count(op)) return FusePattern::Reduction;
  return FusePattern::Injective;
}

std::string Group::ops(const Graph& g) const {
  std::string s;
  for (int n : nodes) s += (s.empty() ? "" : "+") + g.nodes[n].op;
  return s;
}

namespace {

// Values node n reads as tensors (not its shape/constant-only inputs).
std::vector<int> tensor_inputs(const Graph& g, const Node& n) {
  const Converter* c = find_converter(n.op);
  INTERNAL_CHECK(c) << "no converter for " << n.op;
  std::vector<int> out;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    int v = n.inputs[i];
    if (v < 0 || std::count(c->constant_inputs.begin(), c->constant_inputs.end(), int(i))) continue;
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

bool is_reshape(const std::string& op) {
  return op == "Reshape" || op == "Flatten" || op == "DepthToSpace" || op == "SpaceToDepth";
}

}  // namespace

bool concat_fits_in_place(const Graph& g, const Node& n) {
  if (n.dead || n.op != "Concat" || n.outputs.size() != 1 || n.inputs.empty()) return false;
  const Value& o = g.values[size_t(n.outputs[0])];
  if (g.is_output(n.outputs[0]) || o.is_constant()) return false;
  auto a = n.attrs.find("axis");
  int64_t rank = int64_t(o.shape.size()), axis = a == n.attrs.end() ? 0 : a->second.i;
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return false;
  for (int64_t d = 0; d < axis; ++d)
    if (o.shape[size_t(d)] != 1) return false;
  int64_t offset = 0;
  std::set<int> seen;
  for (int v : n.inputs) {
    if (v < 0) return false;
    const Value& in = g.values[size_t(v)];
    int prod = in.producer;
    if (prod < 0 || g.nodes[size_t(prod)].dead || g.nodes[size_t(prod)].op == "Concat" || g.is_output(v) ||
        in.dtype != o.dtype || in.num_elements() == 0 || offset % 64 != 0 || !seen.insert(v).second)
      return false;
    offset += in.num_elements() * in.dtype.bytes();
  }
  return true;
}

std::vector<int> in_place_concats(const Graph& g) {
  std::vector<int> out;
  std::set<int> aliased;
  for (size_t ni = 0; ni < g.nodes.size(); ++ni) {
    const Node& n = g.nodes[ni];
    if (!concat_fits_in_place(g, n)) continue;
    if (std::any_of(n.inputs.begin(), n.inputs.end(), [&](int v) { return aliased.count(v) > 0; })) continue;
    aliased.insert(n.inputs.begin(), n.inputs.end());
    out.push_back(int(ni));
  }
  return out;
}

std::vector<Group> fuse(const Graph& g, const FuseOptions& opts) { return fuse(g, opts, in_place_concats(g)); }

std::vector<Group> fuse(const Graph& g, const FuseOptions& opts, const std::vector<int>& in_place) {
  std::set<int> skip(in_place.begin(), in_place.end());
  std::vector<Group> groups;
  std::vector<size_t> reshapes;  // per group
  std::vector<int> group_of(g.nodes.size(), -1);
  // Uses and readers of every value, once: asking the graph per node made fusing a chain of
  // n nodes O(n^3) (a 2,000-node chain took 16 s).
  std::vector<int> uses(g.values.size(), 0);
  std::vector<std::vector<int>> readers(g.values.size());
  for (size_t ni = 0; ni < g.nodes.size(); ++ni) {
    if (g.nodes[ni].dead) continue;
    for (int v : g.nodes[ni].inputs) {
      if (v < 0) continue;
      ++uses[size_t(v)];
      if (readers[size_t(v)].empty() || readers[size_t(v)].back() != int(ni)) readers[size_t(v)].push_back(int(ni));
    }
  }
  for (size_t v = 0; v < g.values.size(); ++v) uses[v] += g.is_output(int(v)) ? 1 : 0;

  // The one value group gi hands to the outside, when it has exactly one, read once: merging
  // its reader into gi then cannot create a cycle between groups.
  auto sole_output = [&](int gi) {
    int out = -1;
    for (int m : groups[gi].nodes)
      for (int v : g.nodes[m].outputs) {
        bool external = g.is_output(v);
        for (int c : readers[size_t(v)]) external = external || group_of[c] != gi;
        if (!external) continue;
        if (out >= 0 || uses[v] != 1) return -1;
        out = v;
      }
    return out;
  };

  for (size_t ni = 0; ni < g.nodes.size(); ++ni) {
    const Node& n = g.nodes[ni];
    if (n.dead || skip.count(int(ni))) continue;
    FusePattern p = fuse_pattern(n.op);
    int join = -1;
    if (opts.enabled && p != FusePattern::Anchor) {
      for (int v : tensor_inputs(g, n)) {
        int prod = g.values[v].producer;
        if (prod < 0) continue;
        int gi = group_of[prod];
        if (gi < 0) continue;  // an in-place concat: no kernel to join
        if (groups[size_t(gi)].nodes.size() >= opts.max_nodes || sole_output(gi) != v) continue;
        if (is_reshape(n.op) && reshapes[size_t(gi)] >= opts.max_reshapes) continue;
        // A reduction takes only injective producers (its prologue); an injective op joins
        // any producer, preferring a heavy one.
        if (p == FusePattern::Reduction && groups[gi].pattern != FusePattern::Injective) continue;
        if (join < 0 || groups[gi].pattern != FusePattern::Injective) join = gi;
      }
    }
    if (join < 0) {
      groups.push_back({});
      reshapes.push_back(0);
      join = int(groups.size()) - 1;
    }
    groups[join].nodes.push_back(int(ni));
    reshapes[size_t(join)] += is_reshape(n.op);
    if (p != FusePattern::Injective) groups[join].pattern = p;
    group_of[ni] = join;
  }

  // Boundaries.
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    Group& grp = groups[gi];
    std::set<int> produced;
    for (int m : grp.nodes)
      for (int v : g.nodes[m].outputs) produced.insert(v);
    for (int m : grp.nodes) {
      for (int v : tensor_inputs(g, g.nodes[m]))
        if (!produced.count(v) && std::find(grp.inputs.begin(), grp.inputs.end(), v) == grp.inputs.end())
          grp.inputs.push_back(v);
      for (int v : g.nodes[m].outputs) {
        bool outside = g.is_output(v);
        for (int c : readers[size_t(v)]) outside = outside || group_of[c] != int(gi);
        if (outside) grp.outputs.push_back(v);
      }
    }
  }
  // Execution order: by each group's last node (merges only follow single-use edges, so
  // this is a topological order of the groups).
  std::stable_sort(groups.begin(), groups.end(),
                   [](const Group& a, const Group& b) { return a.nodes.back() < b.nodes.back(); });
  return groups;
}

}  // namespace tuner::graph
