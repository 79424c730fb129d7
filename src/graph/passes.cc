#include "graph/passes.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <optional>
#include <map>
#include <tuple>
#include <sstream>

#include "graph/passes_impl.h"
#include "ops/layout.h"
#include "ops/reference.h"
#include "ops/winograd.h"
#include "schedule/fallback.h"
#include "support/error.h"

namespace tuner::graph {

using namespace detail;

int remove_identities(Graph& g) {
  int changed = 0;
  for (Node& n : g.nodes) {
    if (n.dead || (n.op != "Identity" && n.op != "Dropout")) continue;
    if (n.inputs.empty() || n.inputs[0] < 0) continue;
    // Dropout's mask, when used, needs the node; a model output keeps its name through it.
    bool mask_used = n.outputs.size() > 1 && g.use_count(n.outputs[1]) > 0;
    if (mask_used || g.is_output(n.outputs[0])) continue;
    g.replace_uses(n.outputs[0], n.inputs[0]);
    n.dead = true;
    ++changed;
  }
  return changed;
}

int eliminate_dead_code(Graph& g) {
  std::vector<bool> live(g.values.size(), false);
  for (int v : g.outputs) live[size_t(v)] = true;
  int changed = 0;
  for (size_t i = g.nodes.size(); i-- > 0;) {
    Node& n = g.nodes[i];
    if (n.dead) continue;
    bool used = false;
    for (int v : n.outputs) used = used || live[size_t(v)];
    if (!used) {
      n.dead = true;
      ++changed;
      continue;
    }
    for (int v : n.inputs)
      if (v >= 0) live[size_t(v)] = true;
  }
  return changed;
}

namespace {

// A key equal for nodes computing the same thing; empty when the node is not comparable.
std::string node_key(const Node& n) {
  std::ostringstream os;
  os << std::hexfloat;  // float attributes exactly: 1.0000001 and 1.0000003 are two nodes
  os << n.op << "(";
  for (int v : n.inputs) os << v << ",";
  // Which outputs it makes: Split into 2 and into 3 pieces, LayerNormalization with and
  // without its mean, are different nodes.
  os << ")->";
  for (int v : n.outputs) os << (v >= 0 ? "o" : "-");
  for (const auto& [k, a] : n.attrs) {
    if (a.kind == Attr::Tensor) return "";
    os << k << "=" << int(a.kind) << ":" << a.i << ":" << a.f << ":" << a.s << ":";
    for (int64_t x : a.ints) os << x << ",";
    for (double x : a.floats) os << x << ",";
    for (const std::string& x : a.strings) os << x.size() << ":" << x << ",";
    os << ";";
  }
  return os.str();
}

}  // namespace

int eliminate_common_subexpressions(Graph& g) {
  std::map<std::string, int> seen;
  int changed = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    if (n.dead) continue;
    std::string key = node_key(n);
    if (key.empty()) continue;
    auto [it, fresh] = seen.emplace(key, int(i));
    if (fresh) continue;
    const Node& first = g.nodes[size_t(it->second)];
    bool keeps_output = false;
    for (int v : n.outputs) keeps_output = keeps_output || g.is_output(v);
    if (keeps_output) continue;
    for (size_t k = 0; k < n.outputs.size(); ++k)
      if (n.outputs[k] >= 0) g.replace_uses(n.outputs[k], first.outputs[k]);
    n.dead = true;
    ++changed;
  }
  return changed;
}

namespace {

// Per-channel scale and shift of an inference BatchNormalization with constant parameters.
bool bn_affine(const Graph& g, const Node& bn, std::vector<double>& scale,
               std::vector<double>& shift) {
  if (bn.inputs.size() < 5 || bn.outputs.size() != 1) return false;
  for (int i = 1; i < 5; ++i)
    if (bn.inputs[size_t(i)] < 0 || !g.values[size_t(bn.inputs[size_t(i)])].is_constant()) return false;
  const auto& s = *g.values[size_t(bn.inputs[1])].data;
  const auto& b = *g.values[size_t(bn.inputs[2])].data;
  const auto& mean = *g.values[size_t(bn.inputs[3])].data;
  const auto& var = *g.values[size_t(bn.inputs[4])].data;
  if (!s.dtype.is_float()) return false;
  double eps = 1e-5;
  if (auto it = bn.attrs.find("epsilon"); it != bn.attrs.end()) eps = it->second.f;
  int64_t c = s.num_elements();
  scale.resize(size_t(c));
  shift.resize(size_t(c));
  for (int64_t k = 0; k < c; ++k) {
    scale[size_t(k)] = s.get(k) / std::sqrt(var.get(k) + eps);
    shift[size_t(k)] = b.get(k) - mean.get(k) * scale[size_t(k)];
  }
  return true;
}

}  // namespace

int fold_batch_norm(Graph& g) {
  int changed = 0;
  for (Node& bn : g.nodes) {
    if (bn.dead || bn.op != "BatchNormalization" || bn.inputs.empty()) continue;
    int x = bn.inputs[0];
    int prod = g.values[size_t(x)].producer;
    if (prod < 0 || g.use_count(x) != 1) continue;
    Node& conv = g.nodes[size_t(prod)];
    if (conv.op != "Conv" || conv.inputs.size() < 2) continue;
    const Value& wv = g.values[size_t(conv.inputs[1])];
    if (!wv.is_constant() || wv.shape.empty()) continue;
    bool has_bias = conv.inputs.size() > 2 && conv.inputs[2] >= 0;
    if (has_bias && !g.values[size_t(conv.inputs[2])].is_constant()) continue;
    std::vector<double> scale, shift;
    if (!bn_affine(g, bn, scale, shift) || int64_t(scale.size()) != wv.shape[0]) continue;
    // W'[k, ...] = W[k, ...] * scale[k]; b'[k] = b[k] * scale[k] + shift[k].
    ops::HostTensor w = *wv.data;
    int64_t per_k = w.num_elements() / wv.shape[0];
    for (int64_t i = 0; i < w.num_elements(); ++i) w.set(i, w.get(i) * scale[size_t(i / per_k)]);
    ops::HostTensor b({wv.shape[0]}, wv.dtype);
    for (int64_t k = 0; k < wv.shape[0]; ++k) {
      double old = has_bias ? g.values[size_t(conv.inputs[2])].data->get(k) : 0.0;
      b.set(k, old * scale[size_t(k)] + shift[size_t(k)]);
    }
    std::string base = g.values[size_t(conv.inputs[1])].name;
    int new_w = g.add_constant(base + "_bnfolded", std::move(w));
    int new_b = g.add_constant(base + "_bnfolded_bias", std::move(b));
    conv.inputs[1] = new_w;
    if (conv.inputs.size() < 3) conv.inputs.push_back(new_b);
    else conv.inputs[2] = new_b;
    g.replace_uses(bn.outputs[0], x);
    bn.dead = true;
    ++changed;
  }
  return changed;
}

namespace detail {

// The pads of a Conv node as top, left, bottom, right, when it has explicit ones (or none).
std::optional<std::array<int64_t, 4>> explicit_pads(const Node& n) {
  if (auto it = n.attrs.find("auto_pad"); it != n.attrs.end() && it->second.s != "NOTSET") return std::nullopt;
  auto it = n.attrs.find("pads");
  if (it == n.attrs.end()) return std::array<int64_t, 4>{0, 0, 0, 0};
  const auto& p = it->second.ints;
  if (p.size() != 4) return std::nullopt;
  return std::array<int64_t, 4>{p[0], p[1], p[2], p[3]};
}

// A new computed value named after value `like` plus `suffix`, of like's dtype and `shape`.
int add_value_like(Graph& g, int like, const std::string& suffix, ops::Shape shape) {
  Value v;
  v.name = g.values[size_t(like)].name + suffix;
  v.dtype = g.values[size_t(like)].dtype;
  v.shape = std::move(shape);
  return g.add_value(std::move(v));
}

}  // namespace detail

namespace {

// An int64 vector constant (Slice's bounds, Reshape's shape).
int add_i64s(Graph& g, const std::string& name, const std::vector<int64_t>& v) {
  std::vector<double> d(v.begin(), v.end());
  return g.add_constant(name, ops::HostTensor::from_values({int64_t(v.size())}, te::DataType::i64(), d));
}

}  // namespace

namespace detail {

bool all_ones(const Node& n, const char* key) {
  auto it = n.attrs.find(key);
  if (it == n.attrs.end()) return true;
  for (int64_t v : it->second.ints)
    if (v != 1) return false;
  return true;
}

}  // namespace detail

// Two vectors of output channels per pixel, or one: the block whose fallback tile holds more
// accumulators. On AVX2 (12 accumulators) a 7-wide output takes one row of two vectors or 7
// rows of one: 512->512 3x3 at 7x7 5.9 -> 2.3 ms (AMD Zen 3).
int64_t conv_weight_block(int64_t k, int64_t out_w, int lanes, int registers) {
  int64_t block = 0, most = 0;
  for (int64_t vectors : {2, 1}) {
    if (k % (vectors * lanes) != 0) continue;
    int64_t acc = vectors * (out_w > 0 ? schedule::fallback_tile_rows_with_tail(out_w, vectors, registers) : 1);
    if (acc > most) {
      block = vectors * lanes;
      most = acc;
    }
  }
  return block;
}

// A 1x1 stride-1 conv over rows of at least two vectors is a matrix product whose rows of
// output pixels fill the vectors in the plain layout: input loads and output stores are
// contiguous, where the packed form stores every output element with a channel stride
// (measured 1.4-2.5x faster unpacked on MobileNet-V2's 56- and 112-wide layers). Narrower
// rows are packed: with 32 registers the packed tile and its transposed epilogue win on 14-
// and 7-wide rows in both directions (AMD Zen 5, mobilenet_v2 in the model: 96->576 at 14x14
// 0.086 -> 0.059 ms, 64->384 0.036 -> 0.028; 28-wide expansions equal either way). With
// AVX2's 16 registers (AMD Zen 3, cold) packing wins up to 28 wide in both directions
// (96->576 at 14x14 0.23 against 0.36 ms), and at 56 wide where it takes two-vector blocks
// (24->144: 0.22 against 0.28; 144->24, one-vector blocks: 0.32 against 0.30); plain wins at
// 112 wide (16->96: 0.34 against 0.44). With 32 registers a row between one and two
// vectors, its last vector at least 3/4 full (28 wide: 16 + 12 lanes), stays plain when the
// conv expands a short reduction (fewer than 64 input channels, more outputs than inputs):
// each output then takes few multiply-adds, and the packed form's transposed stores cost
// more than its tile saves (Intel Sapphire Rapids, alone: 32->192 0.074 -> 0.055 ms, 40->240
// 0.094 -> 0.070, 24->96 0.034 -> 0.022; mobilenet_v2's 32->192 in the model 0.092-0.104 ->
// 0.062-0.070; 64->128 and 128->256, 20- and 24-wide rows (8-lane or 10-lane vectors) and
// projections stay packed, which wins there). `block`: the packed block conv_weight_block chose.
static bool pointwise_plain_wins(const Graph& g, const Node& n, int vector_lanes, int vector_registers,
                                 int64_t block) {
  const Value& w = g.values[size_t(n.inputs[1])];
  const Value& x = g.values[size_t(n.inputs[0])];
  if (w.shape[2] != 1 || w.shape[3] != 1 || x.shape.size() != 4) return false;
  if (!all_ones(n, "strides")) return false;
  if (auto it = n.attrs.find("pads"); it != n.attrs.end())
    for (int64_t p : it->second.ints)
      if (p != 0) return false;
  if (vector_registers < 32)
    return x.shape[3] >= 8 * vector_lanes || (x.shape[3] >= 4 * vector_lanes && block == vector_lanes);
  int64_t width = x.shape[3], rest = width % vector_lanes;
  bool expands_short_reduction = w.shape[1] < 64 && w.shape[0] > w.shape[1];
  if (expands_short_reduction && width > vector_lanes && rest % 4 == 0 && 4 * rest >= 3 * vector_lanes)
    return true;
  return width >= 2 * vector_lanes;
}


int winograd_convs(Graph& g, int vector_lanes) {
  int changed = 0;
  for (size_t i = g.nodes.size(); i-- > 0;) {  // backwards: insertions keep earlier indices
    const Node& n = g.nodes[i];
    if (n.dead || n.op != "Conv" || n.inputs.size() < 2 || n.inputs[1] < 0 || n.outputs.size() != 1) continue;
    // Copies: adding values below may move g.values.
    const Value x = g.values[size_t(n.inputs[0])], w = g.values[size_t(n.inputs[1])];
    if (!w.is_constant() || w.dtype != te::DataType::f32() || x.dtype != te::DataType::f32()) continue;
    if (x.shape.size() != 4 || w.shape.size() != 4 || w.shape[2] != 3 || w.shape[3] != 3) continue;
    if (auto it = n.attrs.find("group"); it != n.attrs.end() && it->second.i != 1) continue;
    auto pads = explicit_pads(n);
    if (!pads || !all_ones(n, "strides") || !all_ones(n, "dilations")) continue;
    int64_t k = w.shape[0], c = w.shape[1];
    if (c != x.shape[1] || c < kWinogradMinChannels || k < kWinogradMinChannels || k % vector_lanes != 0)
      continue;
    ops::WinogradGeometry geo = ops::WinogradGeometry::make(x.shape, *pads);
    if (geo.tiles_h * geo.tiles_w < kWinogradMinTiles || c * geo.tiles_h * geo.tiles_w < kWinogradMinWork) continue;
    if (ops::kWinogradAlpha * ops::kWinogradAlpha * c * k * 4 > kWinogradMaxWeightBytes) continue;

    int u = g.add_constant(w.name + "_winograd", ops::winograd_weight(*w.data));
    std::vector<Node> fresh(1);
    fresh[0].op = "tuner.WinogradConv";
    fresh[0].name = n.name;
    fresh[0].inputs = {n.inputs[0], u};
    if (n.inputs.size() > 2 && n.inputs[2] >= 0) fresh[0].inputs.push_back(n.inputs[2]);
    fresh[0].outputs = n.outputs;
    fresh[0].attrs["pads"] = ints_attr({(*pads)[0], (*pads)[1], (*pads)[2], (*pads)[3]});
    fresh[0].attrs["data_shape"] = ints_attr(x.shape);
    g.replace_node(i, std::move(fresh));
    ++changed;
  }
  return changed;
}

namespace {

// The output channels a packed conv computes for `k`: the next multiple of two vectors when
// that wastes at most 1/16 (1000 -> 1024; not 24 -> 32), else k.
int64_t padded_output_channels(int64_t k, int vector_lanes) {
  int64_t block = 2 * int64_t(vector_lanes), kp = (k + block - 1) / block * block;
  return 16 * (kp - k) <= k ? kp : k;
}

// `t` [k, ...] with zero rows appended up to `rows`.
ops::HostTensor zero_padded_rows(const ops::HostTensor& t, int64_t rows) {
  ops::Shape shape = t.shape;
  shape[0] = rows;
  ops::HostTensor out(shape, t.dtype);
  std::memset(out.raw(), 0, size_t(out.num_elements()) * size_t(t.dtype.bytes()));
  std::memcpy(out.raw(), t.raw(), size_t(t.num_elements()) * size_t(t.dtype.bytes()));
  return out;
}

// Conv node i computes `kp` output channels (zero weights and bias past its own), and a Slice
// hands the first ones to its readers: the conv can then be packed by whole vectors.
void pad_conv_output(Graph& g, size_t i, int64_t kp) {
  Node conv = g.nodes[i];
  const Value& w = g.values[size_t(conv.inputs[1])];
  int out = conv.outputs[0];
  int64_t k = w.shape[0];
  conv.inputs[1] = g.add_constant(w.name + "_padded", zero_padded_rows(*w.data, kp));
  if (conv.inputs.size() > 2 && conv.inputs[2] >= 0) {
    const Value& b = g.values[size_t(conv.inputs[2])];
    conv.inputs[2] = g.add_constant(b.name + "_padded", zero_padded_rows(*b.data, kp));
  }
  ops::Shape wide = g.values[size_t(out)].shape;
  wide[1] = kp;
  conv.outputs = {add_value_like(g, out, "_padded", wide)};
  auto ints = [&](const char* name, int64_t v) { return add_i64s(g, g.values[size_t(out)].name + name, {v}); };
  Node slice;
  slice.op = "Slice";
  slice.name = conv.name + "_channels";
  slice.inputs = {conv.outputs[0], ints("_start", 0), ints("_end", k), ints("_axis", 1)};
  slice.outputs = {out};
  g.replace_node(i, {std::move(conv), std::move(slice)});
}

}  // namespace

int pack_conv_weights(Graph& g, int vector_lanes, int vector_registers) {
  int changed = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {  // a padded conv's Slice lands at i + 1
    const Node& n = g.nodes[i];
    if (n.dead || n.op != "Conv" || n.inputs.size() < 2 || n.inputs[1] < 0) continue;
    const Value& w = g.values[size_t(n.inputs[1])];
    if (!w.is_constant() || w.shape.size() != 4 || !w.dtype.is_float()) continue;
    const auto& out = g.values[size_t(n.outputs[0])].shape;
    int64_t k = w.shape[0], width = out.size() == 4 ? out[3] : 0;
    // Grouped convs pack when a block fits in a group's output channels (its lanes then read
    // one input channel): resnext50's 3x3 convs with 16 and 32 channels per group 0.40 ->
    // 0.16 and 0.53 -> 0.15 ms (AMD Zen 4). Depthwise convs (one input channel per group)
    // keep their own schedules.
    auto group = n.attrs.find("group");
    int64_t groups = group == n.attrs.end() ? 1 : group->second.i;
    if (groups != 1 && (groups <= 0 || w.shape[1] == 1 || k % groups != 0)) continue;
    int64_t block = conv_weight_block(k / groups, width, vector_lanes, vector_registers);
    // Groups of half a vector (8 of AVX-512's 16 lanes: regnet, resnext's second stage) pack
    // by half vectors when strided: the plain kernel's strided rows load poorly (208 channels
    // 28 -> 14 0.118 -> 0.052 ms, 256 56 -> 28 0.43 -> 0.23; stride 1 is as fast plain).
    if (groups != 1 && block == 0 && k / groups == vector_lanes / 2 && vector_lanes >= 16 && !all_ones(n, "strides"))
      block = vector_lanes / 2;
    // Output channels no block divides (a 1000-class head): computed up to whole blocks of
    // two vectors when that wastes little, so the conv packs instead of staying plain. Intel
    // Sapphire Rapids, squeezenet1_1's 512 -> 1000 1x1 conv at 13x13 1.03 -> 0.61 ms.
    int64_t kp = padded_output_channels(k, vector_lanes);
    bool constant_bias = n.inputs.size() < 3 || n.inputs[2] < 0 || g.values[size_t(n.inputs[2])].is_constant();
    bool pad = groups == 1 && block == 0 && kp != k && constant_bias;
    if (pad) block = conv_weight_block(kp, width, vector_lanes, vector_registers);
    if (block == 0 || pointwise_plain_wins(g, n, vector_lanes, vector_registers, block)) continue;
    if (pad) pad_conv_output(g, i, kp);
    Node& conv = g.nodes[i];
    const Value& weight = g.values[size_t(conv.inputs[1])];
    conv.inputs[1] = g.add_constant(weight.name + "_packed", ops::pack_conv_weight(*weight.data, block));
    ++changed;
  }
  return changed;
}

int transpose_gemm_weights(Graph& g, int vector_lanes) {
  int changed = 0;
  for (Node& n : g.nodes) {
    if (n.dead || n.op != "Gemm" || n.inputs.size() < 2 || n.inputs[1] < 0) continue;
    auto t = n.attrs.find("transB");
    if (t == n.attrs.end() || t->second.i == 0) continue;
    const Value& a = g.values[size_t(n.inputs[0])];
    const Value& b = g.values[size_t(n.inputs[1])];
    if (!b.is_constant() || b.shape.size() != 2) continue;
    // One row of A whose k vectorizes as a row reduction: each output is the dot product of A
    // with a contiguous row of B as stored (schedule::is_row_dot_product); transposed, the
    // kernel would stream B's columns a row apart (mobilenet_v2's 1280 -> 1000 classifier in
    // the model 0.59-0.66 -> 0.32 ms, AMD Zen 3). Other k: the tiled kernel, which wants B [k, n].
    bool one_row = a.shape.size() == 2 && a.shape[0] == 1 && !(n.attrs.count("transA") && n.attrs.at("transA").i);
    if (one_row && schedule::row_reduction_vectorizes(b.shape[1], vector_lanes)) continue;
    n.inputs[1] = g.add_constant(b.name + "_t", ops::transpose_matrix(*b.data));
    t->second.i = 0;
    ++changed;
  }
  return changed;
}

// ONNX stores a recurrent layer's W and R [dirs, gates x hidden, k]: each output unit's
// weights are a row, so the products reduce along rows (one horizontal sum per unit and
// step). Transposed to [dirs, k, gates x hidden] the converters build matrix products whose
// vectors run over the gate units, one contiguous load of R per k and vector (a 50-step LSTM,
// hidden 256: see bench/RESULTS.md). Packed into column panels [dirs, n/b, k, b] when a block
// divides the hidden size (each gate then whole panels), as pack_matmul_weights packs B: a
// step's 1x256 by 256x1024 product read R's rows 4 KB apart, half of L2's sets (9.3 -> 5.0 us).
int pack_recurrent_weights(Graph& g, int vector_lanes) {
  int changed = 0;
  for (Node& n : g.nodes) {
    if (n.dead || (n.op != "RNN" && n.op != "GRU" && n.op != "LSTM") || n.inputs.size() < 3) continue;
    if (n.attrs.count("tuner_weights_kn") || n.inputs[1] < 0 || n.inputs[2] < 0) continue;
    const Value& w = g.values[size_t(n.inputs[1])];
    const Value& r = g.values[size_t(n.inputs[2])];
    if (!w.is_constant() || !r.is_constant() || w.shape.size() != 3 || r.shape.size() != 3 || !w.dtype.is_float() ||
        !r.dtype.is_float())
      continue;
    int64_t hidden = r.shape[2];
    int64_t block = hidden % (2 * vector_lanes) == 0 ? 2 * vector_lanes : hidden % vector_lanes == 0 ? vector_lanes : 0;
    if (w.shape[1] != r.shape[1] || r.shape[1] % std::max<int64_t>(hidden, 1) != 0) block = 0;
    auto layout = [&](const ops::HostTensor& t) {
      return block ? ops::pack_recurrent_weight(t, block) : ops::ref::transpose(t, {0, 2, 1});
    };
    // Both laid out before adding either: add_constant may move g.values (w, r).
    ops::HostTensor wt = layout(*w.data), rt = layout(*r.data);
    std::string suffix = block ? "_packed" : "_kn";
    std::string wname = w.name + suffix, rname = r.name + suffix;
    n.inputs[1] = g.add_constant(wname, std::move(wt));
    n.inputs[2] = g.add_constant(rname, std::move(rt));
    Attr kn, b;
    kn.i = 1;
    b.i = block;
    n.attrs["tuner_weights_kn"] = kn;
    if (block) n.attrs["tuner_weights_block"] = b;
    ++changed;
  }
  return changed;
}

// Conv(h * s, W) with s a per-channel scale computed at run time ([1, C, 1, 1]: a squeeze-
// and-excite gate) and W constant is Conv(h, W * s): scaling the C x K weights replaces a
// pass over the whole map (h read, h * s written). The scaled weight keeps W's layout
// (packed too: s then as [1, C, 1, 1, 1]). Not for a gate per image ([N, C, 1, 1], N > 1).
int fold_channel_scales_into_weights(Graph& g) {
  int changed = 0;
  for (size_t i = g.nodes.size(); i-- > 0;) {  // backwards: replace_node shifts later nodes
    const Node& n = g.nodes[i];
    if (n.dead || n.op != "Conv" || n.inputs.size() < 2 || n.inputs[0] < 0 || n.inputs[1] < 0) continue;
    if (auto it = n.attrs.find("group"); it != n.attrs.end() && it->second.i != 1) continue;
    int x = n.inputs[0];
    const Value w = g.values[size_t(n.inputs[1])];  // copies: add_value below may move g.values
    if (!w.is_constant() || w.dtype != te::DataType::f32() || (w.shape.size() != 4 && w.shape.size() != 5)) continue;
    int m = g.values[size_t(x)].producer;
    if (m < 0 || g.use_count(x) != 1 || g.nodes[size_t(m)].dead || g.nodes[size_t(m)].op != "Mul" ||
        g.nodes[size_t(m)].inputs.size() != 2)
      continue;
    const ops::Shape xs = g.values[size_t(x)].shape;
    int h = -1, scale = -1;
    for (int k = 0; k < 2; ++k) {
      int a = g.nodes[size_t(m)].inputs[size_t(k)], b = g.nodes[size_t(m)].inputs[size_t(1 - k)];
      if (a < 0 || b < 0) continue;
      const Value &va = g.values[size_t(a)], &vb = g.values[size_t(b)];
      if (xs.size() == 4 && va.shape == xs && vb.shape == ops::Shape{1, xs[1], 1, 1} && !vb.is_constant() &&
          vb.dtype == te::DataType::f32() && w.shape[1] == xs[1])
        h = a, scale = b;
    }
    // Only when the weights are smaller than the map: scaling them writes and reads as many
    // floats as the product h * s would (efficientnet's 7x7 stages have the larger weights).
    int64_t per_input_channel = w.shape.size() == 5 ? w.shape[0] * w.shape[4] : w.shape[0];
    for (size_t d = 2; d < 4; ++d) per_input_channel *= w.shape[d];
    if (h < 0 || per_input_channel >= xs[0] * xs[2] * xs[3]) continue;
    std::vector<Node> fresh;
    int s = scale;
    if (w.shape.size() == 5) {  // packed [K/b, C, KH, KW, b]
      Node reshape;
      reshape.op = "Reshape";
      reshape.name = n.name + "_scale";
      ops::Shape packed = {1, xs[1], 1, 1, 1};
      reshape.inputs = {scale, add_i64s(g, reshape.name + "_shape", packed)};
      s = add_value_like(g, scale, "_packed_scale", packed);
      reshape.outputs = {s};
      fresh.push_back(std::move(reshape));
    }
    Node mul;
    mul.op = "Mul";
    mul.name = n.name + "_scaled_weight";
    mul.inputs = {n.inputs[1], s};
    mul.outputs = {add_value_like(g, n.inputs[1], "_scaled", w.shape)};
    Node conv = g.nodes[i];
    conv.inputs[0] = h;
    conv.inputs[1] = mul.outputs[0];
    fresh.push_back(std::move(mul));
    fresh.push_back(std::move(conv));
    g.nodes[size_t(m)].dead = true;
    g.values[size_t(x)].producer = -1;
    g.replace_node(i, std::move(fresh));
    ++changed;
  }
  return changed;
}

// A matmul with a constant B [k, n] reads B panel by panel: each block of output columns
// streams k rows, a row stride apart. Packed [n/b, k, b], a panel is contiguous: untuned,
// 128x256 @ 256x1024 (bert_encoder's FFN) 0.217 -> 0.135 ms, 1024^3 5.83 -> 4.35 ms. A
// single row of A too: a matrix-vector product streams B once, but rows a power of two
// apart fill only some of the cache's sets (AMD Zen 4, 2 threads: 1x256 @ 256x1024 9.6 ->
// 5.3 us, 1x1024 @ 1024x4096 0.366 -> 0.103 ms, 1x768 @ 768x3072 0.090 -> 0.057; 768 or
// 256 columns within 5%).
void run_passes(Graph& g, const PassOptions& opts) {
  if (opts.on_change) opts.on_change("import", g);
  struct Pass {
    const char* name;
    int (*fn)(Graph&);
  };
  for (const Pass& p : {Pass{"remove_identities", remove_identities},
                        Pass{"lower_einsum", lower_einsum},
                        Pass{"fold_batch_norm", fold_batch_norm},
                        Pass{"qdq_to_qlinear", qdq_to_qlinear},
                        Pass{"simplify_algebra", simplify_algebra},
                        Pass{"merge_reshapes", merge_reshapes},
                        Pass{"sink_transposes", sink_transposes},
                        Pass{"cancel_transposes", cancel_transposes},
                        Pass{"reorder_pool_activation", reorder_pool_activation},
                        Pass{"fuse_silu", fuse_silu},
                        Pass{"fuse_gelu", fuse_gelu},
                        Pass{"eliminate_common_subexpressions", eliminate_common_subexpressions},
                        Pass{"eliminate_dead_code", eliminate_dead_code}}) {
    if (p.fn(g) > 0 && opts.on_change) opts.on_change(p.name, g);
  }
  // Layouts last: the passes above see ONNX's layouts.
  INTERNAL_CHECK(opts.vector_lanes == 0 || opts.vector_registers > 0);
  if (opts.vector_lanes > 0 && opts.winograd && winograd_convs(g, opts.vector_lanes) > 0 && opts.on_change)
    opts.on_change("winograd_convs", g);
  if (opts.vector_lanes > 0 && pack_conv_weights(g, opts.vector_lanes, opts.vector_registers) > 0 && opts.on_change)
    opts.on_change("pack_conv_weights", g);
  if (opts.vector_lanes > 0 && opts.byte_dot && byte_dot_convs(g, opts.vector_lanes, opts.vector_registers) > 0 &&
      opts.on_change)
    opts.on_change("byte_dot_convs", g);
  if (opts.vector_lanes > 0 && opts.byte_dot && byte_dot_depthwise_convs(g) > 0 && opts.on_change)
    opts.on_change("byte_dot_depthwise_convs", g);
  if (opts.vector_lanes > 0 && fold_requantize_scales(g) > 0 && opts.on_change)
    opts.on_change("fold_requantize_scales", g);
  if (opts.vector_lanes > 0 && byte_tables(g) > 0 && opts.on_change) opts.on_change("byte_tables", g);
  if (opts.vector_lanes > 0 && pack_integer_conv_weights(g, opts.vector_lanes, opts.vector_registers) > 0 &&
      opts.on_change)
    opts.on_change("pack_integer_conv_weights", g);
  if (opts.vector_lanes > 0 && transpose_gemm_weights(g, opts.vector_lanes) > 0 && opts.on_change)
    opts.on_change("transpose_gemm_weights", g);
  if (opts.vector_lanes > 0 && pack_matmul_weights(g, opts.vector_lanes, opts.byte_dot) > 0 && opts.on_change)
    opts.on_change("pack_matmul_weights", g);
  if (opts.vector_lanes > 0 && pack_recurrent_weights(g, opts.vector_lanes) > 0 && opts.on_change)
    opts.on_change("pack_recurrent_weights", g);
  if (opts.vector_lanes > 0 && fold_channel_scales_into_weights(g) > 0 && opts.on_change)
    opts.on_change("fold_channel_scales_into_weights", g);
  g.compact();
}

}  // namespace tuner::graph
