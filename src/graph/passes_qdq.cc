// QDQ models (QuantizeLinear and DequantizeLinear around float operators: what ONNX Runtime's
// quantizer writes by default) rewritten into the integer operators ONNX Runtime runs them as
// (its QDQ transformers): Q(Conv(DQ(x), DQ(w), DQ(b))) -> QLinearConv, Q(Gemm(DQ(a), DQ(b),
// DQ(c))) -> com.microsoft.QGemm, Q(Add(DQ(a), DQ(b))) -> com.microsoft.QLinearAdd and
// Q(MaxPool(DQ(x))) in one scale -> MaxPool(x). The results then equal ONNX Runtime's, and
// the convs multiply bytes (byte_dot_convs) instead of floats.
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

// A constant zero point's value; 0 when absent.
double scalar_or_zero(const Graph& g, int v) { return v < 0 ? 0 : g.values[size_t(v)].data->get(0); }

// Whether bias value bi of a product of dx's data and weight w (k outputs, per tensor or one
// scale per output) is absent or a folded DequantizeLinear of int32 with zero point 0 and
// scale x_scale x w_scale, the integer operators' bias; sets `b` to it.
bool product_bias(const Graph& g, int bi, const Node& dx, const Dequantized& w, int64_t k,
                  std::shared_ptr<const Dequantized>& b) {
  if (bi < 0) return true;
  b = g.values[size_t(bi)].dequantized;
  if (!b || b->q->dtype != te::DataType::i32() || b->q->num_elements() != k ||
      (b->scale->num_elements() != k && b->scale->num_elements() != 1))
    return false;
  if (b->zero_point)
    for (int64_t e = 0; e < b->zero_point->num_elements(); ++e)
      if (b->zero_point->get_int(e) != 0) return false;
  double xs = g.values[size_t(dx.inputs[1])].data->get(0);
  bool per_channel = w.scale->num_elements() != 1;
  for (int64_t o = 0; o < k; ++o) {
    double want = double(float(xs * w.scale->get(per_channel ? o : 0)));
    double have = b->scale->get(b->scale->num_elements() == 1 ? 0 : o);
    if (std::abs(have - want) > 1e-6 * std::abs(want)) return false;
  }
  return true;
}

// The integer operator's inputs for product `n` (Conv or Gemm) read by QuantizeLinear `q`:
// its data dequantized per tensor, its weight a folded DequantizeLinear of int8 or uint8 of
// `rank` dims per tensor or per output (weight axis `out_axis`), its bias (if any) as
// product_bias takes it. QLinearConv's order, which QGemm shares: x, x_scale, x_zero_point,
// w, w_scale, w_zero_point, then y_scale, y_zero_point, bias (QGemm: bias, y_scale,
// y_zero_point). Empty otherwise.
std::vector<int> integer_product_inputs(Graph& g, const Node& n, const Node& q, size_t rank, int64_t out_axis) {
  const Node* dx = dequantize_of(g, n.inputs[0]);
  if (!dx || n.inputs.size() < 2 || n.inputs[1] < 0) return {};
  std::shared_ptr<const Dequantized> w = g.values[size_t(n.inputs[1])].dequantized;
  if (!w || !is_byte(w->q->dtype) || w->q->shape.size() != rank) return {};
  int64_t k = w->q->shape[size_t(out_axis)];
  if (w->scale->num_elements() != 1 && (w->axis != out_axis || w->scale->shape != ops::Shape{k})) return {};
  std::shared_ptr<const Dequantized> b;
  if (!product_bias(g, input_or_absent(n, 2), *dx, *w, k, b)) return {};
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
    bool pool = n.op == "MaxPool";
    if (n.dead || (n.op != "Conv" && n.op != "Add" && n.op != "Gemm" && !pool) || n.outputs.size() != 1 ||
        n.inputs.size() < (pool ? 1u : 2u))
      continue;
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
      fresh.inputs = integer_product_inputs(g, n, q, 4, 0);
      if (fresh.inputs.empty()) continue;
    } else if (n.op == "Gemm") {
      // ONNX Runtime's QGemm: C (int32, scale a_scale x b_scale) is added as is, so beta 1.
      auto beta = n.attrs.find("beta");
      if (n.inputs.size() > 2 && n.inputs[2] >= 0 && beta != n.attrs.end() && beta->second.f != 1.0f) continue;
      auto tb = n.attrs.find("transB");
      bool trans_b = tb != n.attrs.end() && tb->second.i != 0;
      std::vector<int> in = integer_product_inputs(g, n, q, 2, trans_b ? 0 : 1);
      if (in.empty()) continue;
      fresh.op = "com.microsoft.QGemm";
      fresh.inputs = {in[0], in[1], in[2], in[3], in[4], in[5], in[8], in[6], in[7]};
      for (const char* a : {"transA", "transB", "alpha"})
        if (auto it = n.attrs.find(a); it != n.attrs.end()) fresh.attrs[a] = it->second;
    } else if (pool) {
      // The max of values dequantized by one positive scale is the dequantized max: with the
      // same scale and zero point on both sides ONNX Runtime drops the pair and pools the
      // bytes (resnet18's stem had written floats for it).
      const Node* dx = dequantize_of(g, n.inputs[0]);
      if (!dx || g.values[size_t(dx->inputs[0])].dtype != g.values[size_t(q.outputs[0])].dtype) continue;
      double scale = g.values[size_t(dx->inputs[1])].data->get(0);
      if (scale <= 0 || scale != g.values[size_t(q.inputs[1])].data->get(0) ||
          scalar_or_zero(g, input_or_absent(*dx, 2)) != scalar_or_zero(g, q.inputs[2]))
        continue;
      fresh.op = n.op;
      fresh.attrs = n.attrs;
      fresh.inputs = {dx->inputs[0]};
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
