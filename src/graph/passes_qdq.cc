// QDQ models (QuantizeLinear and DequantizeLinear around float operators: what ONNX Runtime's
// quantizer writes by default) rewritten into the integer operators ONNX Runtime runs them as
// (its QDQ transformers): Q(Conv(DQ(x), DQ(w), DQ(b))) -> QLinearConv and Q(Add(DQ(a), DQ(b)))
// -> com.microsoft.QLinearAdd. The results then equal ONNX Runtime's, and the convs multiply
// bytes (byte_dot_convs) instead of floats.
#include <cmath>

#include "graph/passes.h"

namespace tuner::graph {

namespace {

bool is_byte(te::DataType t) { return t == te::DataType::u8() || t == te::DataType::i8(); }

// A quantization of one scale for the whole tensor: inputs 1 (float32 scale) and 2 (zero point,
// when `needs_zero_point` or present) constant scalars, no blocks.
bool per_tensor_params(const Graph& g, const Node& n, bool needs_zero_point) {
  if (n.inputs.size() < 2 || n.inputs[1] < 0) return false;
  const Value& s = g.values[size_t(n.inputs[1])];
  if (!s.is_constant() || s.num_elements() != 1 || s.dtype != te::DataType::f32()) return false;
  bool has_zp = n.inputs.size() > 2 && n.inputs[2] >= 0;
  if (needs_zero_point && !has_zp) return false;
  if (has_zp && (!g.values[size_t(n.inputs[2])].is_constant() || g.values[size_t(n.inputs[2])].num_elements() != 1))
    return false;
  auto block = n.attrs.find("block_size");
  return block == n.attrs.end() || block->second.i == 0;
}

// The DequantizeLinear of uint8 or int8 data per tensor that computes v, or null.
const Node* dequantize_of(const Graph& g, int v) {
  int p = g.values[size_t(v)].producer;
  if (p < 0) return nullptr;
  const Node& d = g.nodes[size_t(p)];
  if (d.dead || d.op != "DequantizeLinear" || !per_tensor_params(g, d, false)) return nullptr;
  return is_byte(g.values[size_t(d.inputs[0])].dtype) ? &d : nullptr;
}

// The one node reading v (not a model output), or -1.
int sole_reader(const Graph& g, int v) {
  if (g.use_count(v) != 1 || g.is_output(v)) return -1;
  std::vector<int> c = g.consumers(v);
  return c.size() == 1 ? c[0] : -1;
}

int input_or_absent(const Node& n, size_t i) { return i < n.inputs.size() ? n.inputs[i] : -1; }

// QLinearConv's inputs for conv `n` read by QuantizeLinear `q`: its data dequantized per
// tensor, its weight a folded DequantizeLinear of int8 or uint8 per tensor or per output
// channel, its bias (if any) one of int32 whose scale is x_scale x w_scale. Empty otherwise.
std::vector<int> qlinear_conv_inputs(Graph& g, const Node& n, const Node& q) {
  const Node* dx = dequantize_of(g, n.inputs[0]);
  if (!dx || n.inputs.size() < 2 || n.inputs[1] < 0) return {};
  std::shared_ptr<const Dequantized> w = g.values[size_t(n.inputs[1])].dequantized;
  if (!w || !is_byte(w->q->dtype) || w->q->shape.size() != 4) return {};
  int64_t k = w->q->shape[0];
  bool per_channel = w->scale->num_elements() != 1;
  if (per_channel && (w->axis != 0 || w->scale->shape != ops::Shape{k})) return {};
  std::shared_ptr<const Dequantized> b;
  if (int bi = input_or_absent(n, 2); bi >= 0) {
    b = g.values[size_t(bi)].dequantized;
    if (!b || b->q->dtype != te::DataType::i32() || b->q->num_elements() != k ||
        (b->scale->num_elements() != k && b->scale->num_elements() != 1))
      return {};
    if (b->zero_point)
      for (int64_t e = 0; e < b->zero_point->num_elements(); ++e)
        if (b->zero_point->get_int(e) != 0) return {};
    double xs = g.values[size_t(dx->inputs[1])].data->get(0);
    for (int64_t o = 0; o < k; ++o) {
      double want = double(float(xs * w->scale->get(per_channel ? o : 0)));
      double have = b->scale->get(b->scale->num_elements() == 1 ? 0 : o);
      if (std::abs(have - want) > 1e-6 * std::abs(want)) return {};
    }
  }
  auto constant = [&](const std::shared_ptr<const ops::HostTensor>& t, const std::string& suffix) {
    return t ? g.add_constant(n.name + suffix, *t) : -1;
  };
  return {dx->inputs[0],
          dx->inputs[1],
          input_or_absent(*dx, 2),
          constant(w->q, "_w_quantized"),
          constant(w->scale, "_w_scale"),
          constant(w->zero_point, "_w_zero_point"),
          q.inputs[1],
          q.inputs[2],
          b ? constant(b->q, "_b_quantized") : -1};
}

}  // namespace

int qdq_to_qlinear(Graph& g) {
  int changed = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.dead || (n.op != "Conv" && n.op != "Add") || n.outputs.size() != 1 || n.inputs.size() < 2) continue;
    int qi = sole_reader(g, n.outputs[0]);
    if (qi < 0 || g.nodes[size_t(qi)].op != "QuantizeLinear" || !per_tensor_params(g, g.nodes[size_t(qi)], true))
      continue;
    const Node q = g.nodes[size_t(qi)];  // a copy: the node is replaced below
    Node fresh;
    fresh.name = n.name;
    fresh.outputs = q.outputs;
    if (n.op == "Conv") {
      fresh.op = "QLinearConv";
      fresh.attrs = n.attrs;
      fresh.inputs = qlinear_conv_inputs(g, n, q);
      if (fresh.inputs.empty()) continue;
    } else {
      const Node *da = dequantize_of(g, n.inputs[0]), *db = dequantize_of(g, n.inputs[1]);
      if (!da || !db) continue;
      fresh.op = "com.microsoft.QLinearAdd";
      fresh.inputs = {da->inputs[0], da->inputs[1], input_or_absent(*da, 2), db->inputs[0], db->inputs[1],
                      input_or_absent(*db, 2),  q.inputs[1],  q.inputs[2]};
    }
    g.values[size_t(g.nodes[i].outputs[0])].producer = -1;
    g.nodes[size_t(qi)].dead = true;
    g.nodes[i] = std::move(fresh);
    for (int v : g.nodes[i].outputs) g.values[size_t(v)].producer = int(i);
    ++changed;
  }
  return changed;
}

}  // namespace tuner::graph
