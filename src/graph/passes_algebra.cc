// Algebraic simplification and reordering passes (declared in passes.h). Each rewrites nodes
// in place so node order stays topological: a rewritten node keeps its index, a swapped pair
// of nodes keeps both indices, with a fresh value between them, and a lowered Einsum is
// replaced where it stood by its nodes (producers renumbered).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "graph/einsum.h"
#include "graph/passes.h"

namespace tuner::graph {

namespace {

// The single live node reading v, when v has exactly one use and is not a model output.
int sole_consumer(const Graph& g, int v) {
  if (g.use_count(v) != 1) return -1;
  std::vector<int> c = g.consumers(v);
  return c.size() == 1 ? c[0] : -1;
}

// The node producing v when it is a live `op` with one output that only node `reader` reads;
// else null.
Node* sole_producer(Graph& g, int v, const char* op, int reader) {
  int p = v >= 0 ? g.values[size_t(v)].producer : -1;
  if (p < 0 || sole_consumer(g, v) != reader) return nullptr;
  Node& n = g.nodes[size_t(p)];
  return !n.dead && n.op == op && n.outputs.size() == 1 ? &n : nullptr;
}

// Marks nodes dead whose outputs a rewrite no longer reads.
void remove_nodes(Graph& g, const std::vector<Node*>& nodes) {
  for (Node* n : nodes) {
    n->dead = true;
    g.values[size_t(n->outputs[0])].producer = -1;
  }
}

bool all_equal_to(const Value& v, double x) {
  if (!v.is_constant()) return false;
  for (int64_t i = 0; i < v.data->num_elements(); ++i)
    if (v.data->get(i) != x) return false;
  return true;
}

// A constant of zeros that adding (negative: -0) or subtracting (+0) leaves every x as is:
// -0 + +0 is +0, so in floating point only x + -0 and x - +0 are identities.
bool all_neutral_zeros(const Value& v, bool negative) {
  if (!all_equal_to(v, 0)) return false;
  if (!v.dtype.is_float()) return true;
  for (int64_t i = 0; i < v.data->num_elements(); ++i)
    if (std::signbit(v.data->get(i)) != negative) return false;
  return true;
}

// Whether a MaxPool may have a window wholly in the padding, whose max is of nothing: there
// f(max) differs from the max of f. With each pad smaller than the kernel (the converter's
// rule, and auto_pad SAME's) only ceil_mode and dilation make one.
bool may_have_empty_windows(const Node& pool) {
  if (auto it = pool.attrs.find("ceil_mode"); it != pool.attrs.end() && it->second.i != 0)
    return true;
  auto d = pool.attrs.find("dilations");
  return d != pool.attrs.end() &&
         std::any_of(d->second.ints.begin(), d->second.ints.end(), [](int64_t x) { return x != 1; });
}

// The node producing v when it is a live `op` node, else nullptr.
Node* producer_op(Graph& g, int v, std::initializer_list<const char*> ops) {
  int p = v >= 0 ? g.values[size_t(v)].producer : -1;
  if (p < 0 || g.nodes[size_t(p)].dead) return nullptr;
  Node& n = g.nodes[size_t(p)];
  for (const char* op : ops)
    if (n.op == op) return &n;
  return nullptr;
}

std::vector<int64_t> transpose_perm(const Node& n, size_t rank) {
  if (auto it = n.attrs.find("perm"); it != n.attrs.end()) return it->second.ints;
  std::vector<int64_t> p(rank);
  std::iota(p.rbegin(), p.rend(), 0);
  return p;
}

bool is_identity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != int64_t(i)) return false;
  return true;
}

// Elementwise ops of one tensor (further inputs, if any, are constant parameters such as
// Clip's bounds): they commute with any permutation of the elements.
bool is_unary_elementwise(const Node& n) {
  static const std::set<std::string> ops = {
      "Relu", "LeakyRelu", "Sigmoid", "Tanh", "Exp", "Log", "Neg", "Abs", "Sqrt", "Reciprocal",
      "Erf", "HardSigmoid", "HardSwish", "Softplus", "Elu", "Selu", "Celu", "Floor", "Ceil",
      "Round", "Sign", "Not", "Cast", "Clip"};
  return ops.count(n.op) && n.outputs.size() == 1 && !n.inputs.empty();
}

bool extra_inputs_constant(const Graph& g, const Node& n) {
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (n.inputs[i] >= 0 && !g.values[size_t(n.inputs[i])].is_constant()) return false;
  return true;
}

// Non-decreasing activations f: max(f(a), f(b)) == f(max(a, b)).
bool is_monotonic_activation(const Graph& g, const Node& n) {
  if (n.outputs.size() != 1 || n.inputs.empty() || !extra_inputs_constant(g, n)) return false;
  if (n.op == "LeakyRelu") {
    auto it = n.attrs.find("alpha");
    return it == n.attrs.end() || it->second.f >= 0;
  }
  if (n.op == "HardSigmoid") {
    auto it = n.attrs.find("alpha");
    return it == n.attrs.end() || it->second.f >= 0;
  }
  return n.op == "Relu" || n.op == "Sigmoid" || n.op == "Tanh" || n.op == "Clip";
}

// Rewrites producer `first` (reading x) and its sole consumer `second` so that `second`'s
// operation runs first on x and `first`'s operation runs on its result: first' = second's op
// over x into a fresh value of shape `mid_shape`, second' = first's op over that value into
// second's original output. Other inputs of each node move with their operation.
void swap_ops(Graph& g, Node& first, Node& second, const ops::Shape& mid_shape) {
  int x = first.inputs[0];
  int out = second.outputs[0];
  Value mid;
  mid.name = g.values[size_t(out)].name + "_reordered";
  mid.shape = mid_shape;
  mid.dtype = g.values[size_t(out)].dtype;
  int m = g.add_value(std::move(mid));
  std::swap(first.op, second.op);
  std::swap(first.attrs, second.attrs);
  std::swap(first.name, second.name);
  std::vector<int> first_rest(first.inputs.begin() + 1, first.inputs.end());
  std::vector<int> second_rest(second.inputs.begin() + 1, second.inputs.end());
  int old_mid = first.outputs[0];
  first.inputs = {x};
  first.inputs.insert(first.inputs.end(), second_rest.begin(), second_rest.end());
  first.outputs = {m};
  second.inputs = {m};
  second.inputs.insert(second.inputs.end(), first_rest.begin(), first_rest.end());
  g.values[size_t(m)].producer = int(&first - g.nodes.data());
  g.values[size_t(old_mid)].producer = -1;  // unreferenced now; compact() drops it
}

}  // namespace

int simplify_algebra(Graph& g) {
  int changed = 0;
  for (Node& n : g.nodes) {
    if (n.dead || n.inputs.size() != 2 || n.outputs.size() != 1) continue;
    int out = n.outputs[0];
    if (g.is_output(out)) continue;
    // Which input is the neutral constant, given the op: x*1, 1*x, x/1, x+(-0), (-0)+x, x-0, x^1.
    int keep = -1;
    int a = n.inputs[0], b = n.inputs[1];
    if (a < 0 || b < 0) continue;
    const Value &va = g.values[size_t(a)], &vb = g.values[size_t(b)];
    if (n.op == "Mul") keep = all_equal_to(vb, 1) ? a : all_equal_to(va, 1) ? b : -1;
    else if (n.op == "Add")
      keep = all_neutral_zeros(vb, true) ? a : all_neutral_zeros(va, true) ? b : -1;
    else if (n.op == "Div" || n.op == "Pow") keep = all_equal_to(vb, 1) ? a : -1;
    else if (n.op == "Sub") keep = all_neutral_zeros(vb, false) ? a : -1;
    if (keep < 0) continue;
    // Only when broadcasting against the constant changes neither shape nor dtype.
    const Value& kv = g.values[size_t(keep)];
    const Value& ov = g.values[size_t(out)];
    if (kv.shape != ov.shape || kv.dtype != ov.dtype) continue;
    g.replace_uses(out, keep);
    n.dead = true;
    ++changed;
  }
  return changed;
}

int merge_reshapes(Graph& g) {
  int changed = 0;
  for (Node& n : g.nodes) {
    if (n.dead || n.inputs.empty() || n.outputs.size() != 1) continue;
    if (n.op != "Reshape" && n.op != "Flatten" && n.op != "Squeeze" && n.op != "Unsqueeze")
      continue;
    int out = n.outputs[0];
    const Value& ov = g.values[size_t(out)];
    int x = n.inputs[0];
    // Look through a chain of reshapes: only the first input's shape matters.
    while (Node* p = producer_op(g, x, {"Reshape", "Flatten", "Squeeze", "Unsqueeze"}))
      x = p->inputs[0];
    const Value& xv = g.values[size_t(x)];
    if (xv.shape == ov.shape && !g.is_output(out)) {  // a reshape to the same shape
      g.replace_uses(out, x);
      n.dead = true;
      ++changed;
      continue;
    }
    if (x == n.inputs[0]) continue;
    if (std::find(ov.shape.begin(), ov.shape.end(), 0) != ov.shape.end()) continue;
    ops::HostTensor shape({int64_t(ov.shape.size())}, te::DataType::i64());
    for (size_t d = 0; d < ov.shape.size(); ++d) shape.set_int(int64_t(d), ov.shape[d]);
    int s = g.add_constant(ov.name + "_shape", std::move(shape));
    n.op = "Reshape";
    n.attrs.clear();
    n.inputs = {x, s};
    ++changed;
  }
  return changed;
}

int sink_transposes(Graph& g) {
  int changed = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& t = g.nodes[i];
    if (t.dead || t.op != "Transpose" || t.inputs.size() != 1) continue;
    int c = sole_consumer(g, t.outputs[0]);
    if (c < 0) continue;
    Node& u = g.nodes[size_t(c)];
    if (!is_unary_elementwise(u) || u.inputs[0] != t.outputs[0] || !extra_inputs_constant(g, u))
      continue;
    // Only towards another transpose it can cancel with or fold into; otherwise moving it
    // gains nothing.
    int next = sole_consumer(g, u.outputs[0]);
    bool towards_transpose = false;
    for (int k = next; k >= 0;) {
      const Node& nk = g.nodes[size_t(k)];
      if (nk.op == "Transpose") { towards_transpose = true; break; }
      if (!is_unary_elementwise(nk)) break;
      k = sole_consumer(g, nk.outputs[0]);
    }
    if (!towards_transpose) continue;
    swap_ops(g, t, u, g.values[size_t(t.inputs[0])].shape);
    ++changed;
  }
  return changed;
}

int cancel_transposes(Graph& g) {
  int changed = 0;
  for (Node& n : g.nodes) {
    if (n.dead || n.op != "Transpose" || n.inputs.size() != 1) continue;
    Node* p = producer_op(g, n.inputs[0], {"Transpose"});
    if (!p) continue;
    int x = p->inputs[0];
    size_t rank = g.values[size_t(x)].shape.size();
    std::vector<int64_t> p1 = transpose_perm(*p, rank), p2 = transpose_perm(n, rank);
    if (p1.size() != rank || p2.size() != rank) continue;
    // out axis i = mid axis p2[i] = x axis p1[p2[i]].
    std::vector<int64_t> perm(rank);
    for (size_t d = 0; d < rank; ++d) perm[d] = p1[size_t(p2[d])];
    int out = n.outputs[0];
    if (is_identity(perm) && !g.is_output(out)) {
      g.replace_uses(out, x);
      n.dead = true;
    } else {
      n.inputs = {x};
      n.attrs["perm"] = ints_attr(perm);
    }
    ++changed;
  }
  return changed;
}

int reorder_pool_activation(Graph& g) {
  int changed = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& act = g.nodes[i];
    if (act.dead || !is_monotonic_activation(g, act)) continue;
    int c = sole_consumer(g, act.outputs[0]);
    if (c < 0) continue;
    Node& pool = g.nodes[size_t(c)];
    if ((pool.op != "MaxPool" && pool.op != "GlobalMaxPool") || pool.outputs.size() != 1 ||
        pool.inputs[0] != act.outputs[0])
      continue;
    if (pool.op == "MaxPool" && may_have_empty_windows(pool)) continue;
    swap_ops(g, act, pool, g.values[size_t(pool.outputs[0])].shape);
    ++changed;
  }
  return changed;
}

int fuse_silu(Graph& g) {
  int changed = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& mul = g.nodes[i];
    if (mul.dead || mul.op != "Mul" || mul.inputs.size() != 2 || mul.outputs.size() != 1) continue;
    for (int k = 0; k < 2; ++k) {
      int x = mul.inputs[size_t(k)];
      Node* gate = sole_producer(g, mul.inputs[size_t(1 - k)], "Sigmoid", int(i));
      if (!gate) gate = sole_producer(g, mul.inputs[size_t(1 - k)], "HardSigmoid", int(i));
      if (x < 0 || !gate || gate->inputs.size() != 1 || gate->inputs[0] != x) continue;
      remove_nodes(g, {gate});
      mul.op = gate->op == "Sigmoid" ? "tuner.Silu" : "tuner.HardSwish";
      if (gate->op == "HardSigmoid") mul.attrs = gate->attrs;  // alpha, beta
      mul.inputs = {x};
      ++changed;
      break;
    }
  }
  return changed;
}

namespace {

// The input of a two-input node other than a constant equal to c (as a value id), or -1.
int other_than_constant(const Graph& g, const Node& n, double c) {
  if (n.inputs.size() != 2) return -1;
  for (int k = 0; k < 2; ++k) {
    int v = n.inputs[size_t(k)];
    if (v < 0) continue;
    const Value& cv = g.values[size_t(v)];
    if (cv.is_constant() && cv.data->num_elements() == 1 && std::fabs(cv.data->get(0) - c) <= 1e-6 * std::fabs(c))
      return n.inputs[size_t(1 - k)];
  }
  return -1;
}

// When value v, read only by node `reader`, is 1 + erf(x / sqrt 2) (a Div by sqrt 2 or a Mul
// by its inverse), its nodes read by nothing else: x, with those nodes added to `nodes`.
// Else -1.
int one_plus_erf_of_scaled(Graph& g, int v, int reader, std::vector<Node*>& nodes) {
  Node* add = sole_producer(g, v, "Add", reader);
  int e = add ? other_than_constant(g, *add, 1.0) : -1;
  Node* erf = e >= 0 ? sole_producer(g, e, "Erf", g.values[size_t(v)].producer) : nullptr;
  if (!erf || erf->inputs.size() != 1) return -1;
  int scaled = erf->inputs[0], erf_id = g.values[size_t(e)].producer;
  int x = -1;
  Node* scale = sole_producer(g, scaled, "Div", erf_id);
  if (scale && scale->inputs.size() == 2 && other_than_constant(g, *scale, std::sqrt(2.0)) == scale->inputs[0])
    x = scale->inputs[0];
  if (!scale && (scale = sole_producer(g, scaled, "Mul", erf_id))) x = other_than_constant(g, *scale, M_SQRT1_2);
  if (x < 0) return -1;
  nodes.insert(nodes.end(), {add, erf, scale});
  return x;
}

// x when node `out` computes PyTorch's GELU of x: (x * (1 + erf)) * 0.5 or (x * 0.5) * (1 +
// erf), either Mul's operands in either order; the nodes before `out` go into `nodes`.
int gelu_input(Graph& g, int out, std::vector<Node*>& nodes) {
  const Node& n = g.nodes[size_t(out)];
  if (n.inputs.size() != 2) return -1;
  if (int p = other_than_constant(g, n, 0.5); p >= 0) {  // (x * (1 + erf)) * 0.5
    Node* m = sole_producer(g, p, "Mul", out);
    for (int k = 0; m && m->inputs.size() == 2 && k < 2; ++k) {
      std::vector<Node*> found = {m};
      if (one_plus_erf_of_scaled(g, m->inputs[size_t(k)], g.values[size_t(p)].producer, found) ==
          m->inputs[size_t(1 - k)]) {
        nodes = found;
        return m->inputs[size_t(1 - k)];
      }
    }
  }
  for (int k = 0; k < 2; ++k) {  // (x * 0.5) * (1 + erf)
    Node* h = sole_producer(g, n.inputs[size_t(k)], "Mul", out);
    int x = h ? other_than_constant(g, *h, 0.5) : -1;
    std::vector<Node*> found = {h};
    if (x >= 0 && one_plus_erf_of_scaled(g, n.inputs[size_t(1 - k)], out, found) == x) {
      nodes = found;
      return x;
    }
  }
  return -1;
}

}  // namespace

int fuse_gelu(Graph& g) {
  int changed = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& out = g.nodes[i];
    if (out.dead || out.op != "Mul" || out.outputs.size() != 1) continue;
    std::vector<Node*> nodes;
    int x = gelu_input(g, int(i), nodes);
    if (x < 0) continue;
    remove_nodes(g, nodes);
    out.op = "tuner.Gelu";
    out.inputs = {x};
    ++changed;
  }
  return changed;
}

namespace {

struct NotAMatmul {};


}  // namespace

int lower_einsum(Graph& g) {
  int changed = 0;
  for (size_t i = g.nodes.size(); i-- > 0;) {  // backwards: insertions keep earlier indices
    const Node& n = g.nodes[i];
    if (n.dead || n.op != "Einsum" || n.inputs.size() != 2 || n.outputs.size() != 1) continue;
    int a = n.inputs[0], b = n.inputs[1], out = n.outputs[0];
    const Value &va = g.values[size_t(a)], &vb = g.values[size_t(b)];
    // A copy: the transposes added below may move g.values.
    const std::string out_name = g.values[size_t(out)].name;
    const ops::Shape out_shape = g.values[size_t(out)].shape;
    const te::DataType out_dtype = g.values[size_t(out)].dtype;
    std::optional<EinsumMatmul> form;
    try {
      auto eq = n.attrs.find("equation");
      if (eq == n.attrs.end() || va.dtype != vb.dtype) continue;
      form = einsum_as_matmul(parse_einsum(eq->second.s, {va.shape, vb.shape},
                                           [](const std::string&) { throw NotAMatmul{}; }));
    } catch (const NotAMatmul&) {
      continue;  // the converter reports a malformed equation
    }
    if (!form) continue;
    std::vector<Node> fresh;
    std::string base = n.name;
    auto transpose = [&](int x, const std::vector<int64_t>& perm, int into, const char* tag) {
      if (into < 0) {
        Value v;
        v.name = g.values[size_t(out)].name + "_" + tag;
        v.shape = ops::transpose_shape(g.values[size_t(x)].shape, perm, base);
        v.dtype = g.values[size_t(x)].dtype;
        into = g.add_value(std::move(v));
      }
      Node t;
      t.op = "Transpose";
      t.name = base + "_" + tag;
      t.inputs = {x};
      t.outputs = {into};
      t.attrs["perm"] = ints_attr(perm);
      fresh.push_back(std::move(t));
      return into;
    };
    if (!is_identity(form->perm_a)) a = transpose(a, form->perm_a, -1, "a");
    if (!is_identity(form->perm_b)) b = transpose(b, form->perm_b, -1, "b");
    int product = out;
    if (!is_identity(form->perm_out)) {
      std::vector<int64_t> inverse(form->perm_out.size());
      for (size_t d = 0; d < inverse.size(); ++d) inverse[size_t(form->perm_out[d])] = int64_t(d);
      Value v;
      v.name = out_name + "_mm";
      v.shape = ops::transpose_shape(out_shape, inverse, base);
      v.dtype = out_dtype;
      product = g.add_value(std::move(v));
    }
    Node mm;
    mm.op = "MatMul";
    mm.name = base;
    mm.inputs = {a, b};
    mm.outputs = {product};
    fresh.push_back(std::move(mm));
    if (product != out) transpose(product, form->perm_out, out, "out");
    g.replace_node(i, std::move(fresh));
    ++changed;
  }
  return changed;
}

}  // namespace tuner::graph
