// Integer products' layout passes (declared in passes.h): byte_dot_convs,
// pack_integer_conv_weights and pack_matmul_weights (float and integer B), and the helpers
// they share with passes.cc (passes_impl.h).
#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "graph/evaluate.h"
#include "graph/fusion.h"
#include "graph/passes.h"
#include "graph/passes_impl.h"
#include "ops/layout.h"
#include "ops/nn.h"
#include "support/error.h"

namespace tuner::graph {

using namespace detail;

namespace detail {

// Integer weights w minus their zero point (absent, a scalar, or one per index of `axis`), in
// int32: what an integer product multiplies.
ops::HostTensor centre_on_zero_point(const Value& w, const Value* zp, size_t axis) {
  ops::HostTensor out(w.shape, te::DataType::i32());
  int64_t stride = 1;
  for (size_t d = axis + 1; d < w.shape.size(); ++d) stride *= w.shape[d];
  for (int64_t e = 0; e < w.num_elements(); ++e) {
    int64_t z = zp ? zp->data->get_int(zp->num_elements() == 1 ? 0 : (e / stride) % w.shape[axis]) : 0;
    out.set(e, double(w.data->get_int(e) - z));
  }
  return out;
}

// The zero point input `zi` of n if it is absent or constant (`ok` false otherwise).
const Value* constant_zero_point(const Graph& g, const Node& n, size_t zi, bool& ok) {
  ok = true;
  if (n.inputs.size() <= zi || n.inputs[zi] < 0) return nullptr;
  const Value& zp = g.values[size_t(n.inputs[zi])];
  ok = zp.is_constant() && zp.num_elements() > 0;
  return &zp;
}

// A tuner.ByteWords node of `reader`'s input 0 into `fresh`; returns its int32 output of `shape`.
int add_byte_words(Graph& g, const Node& reader, ops::Shape shape, std::map<std::string, Attr> attrs,
                   std::vector<Node>& fresh) {
  Node words;
  words.op = "tuner.ByteWords";
  words.name = reader.name + "_words";
  words.inputs = {reader.inputs[0]};
  words.attrs = std::move(attrs);
  int out = add_value_like(g, reader.inputs[0], "_words", std::move(shape));
  g.values[size_t(out)].dtype = te::DataType::i32();
  words.outputs = {out};
  fresh.push_back(std::move(words));
  return out;
}

// Replaces node i by `fresh` (the node itself last, its outputs unchanged); returns how many
// nodes came before it. Alone it takes the node's place: no producer to renumber.
size_t replace_node_by(Graph& g, size_t i, std::vector<Node> fresh) {
  size_t added = fresh.size() - 1;
  if (added == 0) g.nodes[i] = std::move(fresh[0]);
  else g.replace_node(i, std::move(fresh));
  return added;
}

size_t matmul_column_sums_input(const std::string& op) {
  return op == "MatMulInteger" ? 4 : op == "QLinearMatMul" ? 8 : 9;
}

// True when every value of t is an int8.
bool fits_int8(const ops::HostTensor& t) {
  for (int64_t e = 0; e < t.num_elements(); ++e)
    if (t.get_int(e) < -128 || t.get_int(e) > 127) return false;
  return true;
}

// Input i of n set to v, absent inputs before it added.
void set_input(Node& n, size_t i, int v) {
  if (n.inputs.size() <= i) n.inputs.resize(i + 1, -1);
  n.inputs[i] = v;
}

}  // namespace detail

namespace {

// Conv n's constant bias (input bi, or none) minus fill x the sum of each output channel's
// centred weights [K, ...]: (x - fill) w summed = x w summed - fill sum(w).
ops::HostTensor bias_minus_fill_products(const Graph& g, const Node& n, size_t bi, const ops::HostTensor& centred,
                                         int64_t fill) {
  int64_t k = centred.shape[0], per_k = centred.num_elements() / k;
  ops::HostTensor bias({k}, te::DataType::i32());
  for (int64_t o = 0; o < k; ++o) {
    int64_t sum = 0;
    for (int64_t e = 0; e < per_k; ++e) sum += centred.get_int(o * per_k + e);
    int64_t b = n.inputs.size() > bi && n.inputs[bi] >= 0 ? g.values[size_t(n.inputs[bi])].data->get_int(o) : 0;
    bias.set_int(o, b - fill * sum);
  }
  return bias;
}

// A depthwise weight [C, 1, KH, KW] (KW <= 3, centred int8 values) as [C, 1, KH, 1] words of
// each row's taps, byte j tap j (0 past KW).
ops::HostTensor row_words(const ops::HostTensor& centred) {
  int64_t c = centred.shape[0], kh = centred.shape[2], kw = centred.shape[3];
  ops::HostTensor out({c, 1, kh, 1}, te::DataType::i32());
  for (int64_t r = 0; r < c * kh; ++r) {
    uint32_t word = 0;
    for (int64_t j = 0; j < kw; ++j) word |= uint32_t(uint8_t(int8_t(centred.get_int(r * kw + j)))) << (8 * j);
    out.set_int(r, int32_t(word));
  }
  return out;
}

}  // namespace

int byte_dot_convs(Graph& g, int vector_lanes, int vector_registers) {
  int changed = 0;
  std::map<std::tuple<int, int64_t, std::array<int64_t, 4>>, int> words_of;  // (data, fill, pads) -> words
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node n = g.nodes[i];  // a copy: the graph grows below
    bool qlinear = n.op == "QLinearConv";
    if (n.dead || (!qlinear && n.op != "ConvInteger") || n.inputs.size() < 2) continue;
    size_t wi = qlinear ? 3 : 1, zi = qlinear ? 5 : 3, bi = qlinear ? 8 : 4;
    if (n.inputs.size() <= wi || n.inputs[wi] < 0 || n.inputs[0] < 0) continue;
    // Copies: adding values below may move g.values.
    const Value x = g.values[size_t(n.inputs[0])], w = g.values[size_t(n.inputs[wi])];
    bool x_zp_ok = false, w_zp_ok = false;
    const Value* x_zp = constant_zero_point(g, n, 2, x_zp_ok);
    const Value* w_zp = constant_zero_point(g, n, zi, w_zp_ok);
    bool x_bytes = x.dtype == te::DataType::u8() || x.dtype == te::DataType::i8();
    if (!x_bytes || x.shape.size() != 4 || !w.is_constant() || w.shape.size() != 4 || !x_zp_ok || !w_zp_ok ||
        (x_zp && x_zp->num_elements() != 1))
      continue;
    if (auto group = n.attrs.find("group"); group != n.attrs.end() && group->second.i != 1) continue;
    bool constant_bias = n.inputs.size() <= bi || n.inputs[bi] < 0 || g.values[size_t(n.inputs[bi])].is_constant();
    const auto& out = g.values[size_t(n.outputs[0])].shape;
    int64_t k = w.shape[0], block = conv_weight_block(k, out.size() == 4 ? out[3] : 0, vector_lanes, vector_registers);
    // Output channels no vector divides (mobilenet_v2's 24): half vectors, which the byte dot
    // still takes natively, rather than the int32 products.
    if (block == 0 && vector_lanes >= 16 && k % (vector_lanes / 2) == 0) block = vector_lanes / 2;
    // A 1x1 stride-1 conv over rows of two vectors or more takes its weights plain: its
    // vectors then run over output pixels (a data vector of words, one weight word
    // broadcast), stores are contiguous and the epilogue needs no transpose. Packed, every
    // pixel's 16 channels go to 16 rows (AMD Zen 4, mobilenet_v2 quantized in the model:
    // 16->96 at 112x112 0.29 -> 0.13 ms, 24->144 at 56x56 0.19 -> 0.07). Rows between one
    // and two vectors too when the conv expands (32->192 at 28x28 0.050 -> 0.041); its
    // projections there are faster packed (192->32 0.027 -> 0.031 plain). Output channels no
    // block divides (shufflenet's 58 and 116) take plain weights at any width: the int32
    // products were 5-8x slower.
    int64_t width = x.shape[3];
    std::array<int64_t, 4> pads = explicit_pads(n).value_or(std::array<int64_t, 4>{0, 0, 0, 0});
    bool pointwise = w.shape[2] == 1 && w.shape[3] == 1 && pads == std::array<int64_t, 4>{0, 0, 0, 0} &&
                     all_ones(n, "strides");
    bool plain = pointwise && (block == 0 || width >= 2 * vector_lanes ||
                               (width > vector_lanes && w.shape[0] > w.shape[1]));
    ops::HostTensor centred = centre_on_zero_point(w, w_zp, 0);
    if (!constant_bias || (block == 0 && !plain) || !fits_int8(centred)) continue;

    // (x - zx) w = x w - zx w: the data's bytes as uint8 (int8 + 128) with the zero point's
    // sum folded into the bias, and the padding filled with the zero point.
    int64_t fill = (x_zp ? x_zp->data->get_int(0) : 0) + (x.dtype == te::DataType::i8() ? 128 : 0);
    ops::HostTensor bias = bias_minus_fill_products(g, n, bi, centred, fill);
    // The padding too, filled once in the words (no border tests in the conv), when explicit.
    if (explicit_pads(n)) n.attrs["pads"] = ints_attr({0, 0, 0, 0});
    std::vector<Node> fresh;
    auto [it, is_new] = words_of.try_emplace({n.inputs[0], fill, pads}, -1);
    if (is_new) {
      ops::Shape ws = x.shape;
      ws[1] = (ws[1] + 3) / 4;
      ws[2] += pads[0] + pads[2];
      ws[3] += pads[1] + pads[3];
      std::map<std::string, Attr> attrs = {{"pads", ints_attr({pads[0], pads[1], pads[2], pads[3]})}};
      attrs["fill"].i = fill;
      it->second = add_byte_words(g, n, ws, std::move(attrs), fresh);
    }
    n.inputs[0] = it->second;
    ops::HostTensor words = ops::byte_words(centred);
    n.inputs[wi] = g.add_constant(w.name + "_byte_words", plain ? std::move(words) : ops::pack_conv_weight(words, block));
    if (n.inputs.size() > 2) n.inputs[2] = -1;
    if (n.inputs.size() > zi) n.inputs[zi] = -1;
    set_input(n, bi, g.add_constant(n.name + "_byte_dot_bias", std::move(bias)));
    n.attrs["tuner_pad_word"].i = int64_t(int32_t(uint32_t(fill) * 0x01010101u));
    fresh.push_back(std::move(n));
    i += replace_node_by(g, i, std::move(fresh));
    ++changed;
  }
  return changed;
}

int byte_dot_depthwise_convs(Graph& g) {
  int changed = 0;
  for (Node& n : g.nodes) {
    bool qlinear = n.op == "QLinearConv";
    if (n.dead || (!qlinear && n.op != "ConvInteger") || n.attrs.count("tuner_pad_word")) continue;
    size_t wi = qlinear ? 3 : 1, zi = qlinear ? 5 : 3, bi = qlinear ? 8 : 4;
    if (n.inputs.size() <= wi || n.inputs[wi] < 0 || n.inputs[0] < 0) continue;
    // Copies: adding constants below may move g.values.
    const Value x = g.values[size_t(n.inputs[0])], w = g.values[size_t(n.inputs[wi])];
    if (x.dtype != te::DataType::u8() || x.shape.size() != 4 || !w.is_constant() || w.shape.size() != 4) continue;
    auto group = n.attrs.find("group");
    int64_t c = x.shape[1];
    // One output channel per input channel, windows up to 3 wide (3 taps and a zero byte per word).
    if (group == n.attrs.end() || group->second.i != c || w.shape[0] != c || w.shape[1] != 1 || w.shape[3] > 3)
      continue;
    if (!explicit_pads(n) || !all_ones(n, "dilations")) continue;
    bool x_zp_ok = false, w_zp_ok = false;
    const Value* x_zp = constant_zero_point(g, n, 2, x_zp_ok);
    const Value* w_zp = constant_zero_point(g, n, zi, w_zp_ok);
    if (!x_zp_ok || !w_zp_ok || (x_zp && x_zp->num_elements() != 1)) continue;
    if (n.inputs.size() > bi && n.inputs[bi] >= 0 && !g.values[size_t(n.inputs[bi])].is_constant()) continue;
    ops::HostTensor centred = centre_on_zero_point(w, w_zp, 0);
    if (!fits_int8(centred)) continue;

    // The data's bytes as they are, the padding its zero point, whose products the bias takes.
    int64_t fill = x_zp ? x_zp->data->get_int(0) : 0;
    int64_t kw = w.shape[3];
    ops::HostTensor bias = bias_minus_fill_products(g, n, bi, centred, fill);
    n.inputs[wi] = g.add_constant(w.name + "_row_words", row_words(centred));
    if (n.inputs.size() > 2) n.inputs[2] = -1;
    if (n.inputs.size() > zi) n.inputs[zi] = -1;
    set_input(n, bi, g.add_constant(n.name + "_byte_dot_bias", std::move(bias)));
    n.attrs.erase("kernel_shape");  // the weight's is now 1 wide
    n.attrs["tuner_pad_word"].i = fill;
    n.attrs["tuner_row_words"].i = kw;
    ++changed;
  }
  return changed;
}

int fold_requantize_scales(Graph& g) {
  int changed = 0;
  for (Node& n : g.nodes) {
    if (n.dead || n.op != "QLinearConv" || n.inputs.size() < 8 || n.inputs.size() > 9) continue;
    auto constant_f32 = [&](size_t i) -> const Value* {
      if (n.inputs[i] < 0) return nullptr;
      const Value& v = g.values[size_t(n.inputs[i])];
      return v.is_constant() && v.dtype == te::DataType::f32() ? &v : nullptr;
    };
    const Value *xs = constant_f32(1), *ws = constant_f32(4), *ys = constant_f32(6);
    if (!xs || !ws || !ys || xs->num_elements() != 1 || ys->num_elements() != 1) continue;
    // float32 (x_scale x w_scale) / y_scale, as the converter's kernel (and ONNX Runtime) computes it.
    int64_t k = ws->num_elements();
    ops::HostTensor m({k}, te::DataType::f32());
    float x = float(xs->data->get(0)), y = float(ys->data->get(0));
    for (int64_t o = 0; o < k; ++o) {
      float xw = x * float(ws->data->get(o));
      m.set(o, double(xw / y));
    }
    std::string name = n.name + "_requantize_scale";
    set_input(n, 9, g.add_constant(name, std::move(m)));
    ++changed;
  }
  return changed;
}

namespace {

// What nodes `chain` (of g or made like them, in order, the first reading uint8 value x, each
// later one reading earlier outputs, x or constants) give for each of x's 256 bytes, computed
// by the operators' own converters on a graph of just them (evaluate_graph): a table of it
// equals them. None when another input is not constant or the result is not uint8.
std::optional<ops::HostTensor> byte_table(const Graph& g, int x, std::vector<Node> chain) {
  Graph sub;
  sub.opset = g.opset;
  std::map<int, int> id;  // g's value -> sub's
  auto like = [&](int v, ops::Shape shape) {
    Value copy = g.values[size_t(v)];
    copy.producer = -1, copy.dequantized = nullptr;
    if (!shape.empty()) copy.shape = std::move(shape), copy.data = nullptr;
    return id[v] = sub.add_value(std::move(copy));
  };
  sub.inputs = {like(x, {256})};
  for (Node& n : chain) {
    for (int& v : n.inputs) {
      if (v < 0 || id.count(v)) {
        v = v < 0 ? v : id[v];
        continue;
      }
      if (!g.values[size_t(v)].is_constant()) return std::nullopt;
      v = like(v, {});
    }
    for (int& v : n.outputs) v = like(v, {256});
    sub.add_node(std::move(n));
  }
  sub.outputs = {sub.nodes.back().outputs[0]};
  if (sub.values[size_t(sub.outputs[0])].dtype != te::DataType::u8()) return std::nullopt;
  std::vector<double> bytes(256);
  for (int v = 0; v < 256; ++v) bytes[size_t(v)] = v;
  return evaluate_graph(sub, {ops::HostTensor::from_values({256}, te::DataType::u8(), bytes)})[0];
}

// Whether values a and b (-1: absent) are both absent or equal one-element constants.
bool same_scalar(const Graph& g, int a, int b) {
  if (a < 0 || b < 0) return a == b;
  return g.values[size_t(a)].same_scalar_constant(g.values[size_t(b)]);
}

// QLinearConcat node i (inputs Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) per
// part) of uint8 parts each made by a QLinearConv for it alone: every part not in Y's scale
// and zero point first requantized by a look-up (a one-part concat's values on its 256
// bytes), then a plain Concat. in_place_concats then has the convs write it, each table fused
// into its conv (squeezenet's expand convs: the concat kernel had requantized both; the
// model 0.88x its time). Parts made by other nodes (shufflenet's split halves), or not in
// place (22736-byte parts, not 64-byte multiples), keep the QLinearConcat: a table there is
// a kernel of its own or a gather per element in the concat's.
size_t concat_in_one_scale(Graph& g, size_t i) {
  Node n = g.nodes[i];
  if (n.inputs.size() < 5 || (n.inputs.size() - 2) % 3 != 0 || n.outputs.size() != 1 || !n.attrs.count("axis"))
    return 0;
  auto u8 = [&](int v) { return v >= 0 && g.values[size_t(v)].dtype == te::DataType::u8(); };
  for (size_t k = 2; k < n.inputs.size(); k += 3) {
    int x = n.inputs[k], p = x < 0 ? -1 : g.values[size_t(x)].producer;
    if (!u8(x) || p < 0 || g.nodes[size_t(p)].op != "QLinearConv" || g.use_count(x) != 1) return 0;
  }
  if (!u8(n.outputs[0])) return 0;
  Node cat;
  cat.op = "Concat";
  cat.name = n.name;
  cat.outputs = n.outputs;
  cat.attrs["axis"] = n.attrs.at("axis");
  for (size_t k = 2; k < n.inputs.size(); k += 3) cat.inputs.push_back(n.inputs[k]);
  // The tables' outputs will be laid out as the parts are.
  if (!concat_fits_in_place(g, cat)) return 0;
  cat.inputs.clear();
  std::vector<Node> fresh;
  for (size_t k = 2; k < n.inputs.size(); k += 3) {
    int x = n.inputs[k];
    if (!same_scalar(g, n.inputs[k + 1], n.inputs[0]) || !same_scalar(g, n.inputs[k + 2], n.inputs[1])) {
      Node one;
      one.op = n.op;
      one.inputs = {n.inputs[0], n.inputs[1], x, n.inputs[k + 1], n.inputs[k + 2]};
      one.outputs = n.outputs;
      one.attrs["axis"].i = 0;
      std::optional<ops::HostTensor> t = byte_table(g, x, {std::move(one)});
      if (!t) return 0;
      Node lu;
      lu.op = "tuner.LookUp";
      lu.name = n.name + "_part" + std::to_string(k / 3);
      lu.inputs = {x, g.add_constant(lu.name + "_table", std::move(*t))};
      lu.outputs = {add_value_like(g, x, "_in_concat_scale", g.values[size_t(x)].shape)};
      x = lu.outputs[0];
      fresh.push_back(std::move(lu));
    }
    cat.inputs.push_back(x);
  }
  fresh.push_back(std::move(cat));
  return replace_node_by(g, i, std::move(fresh)) + 1;
}

// Node i of g replaced by tuner.LookUp of x in `table`.
void look_up(Graph& g, size_t i, int x, ops::HostTensor table) {
  Node& n = g.nodes[i];
  int t = g.add_constant(n.name + "_table", std::move(table));
  n.op = "tuner.LookUp";
  n.inputs = {x, t};
  n.attrs.clear();
}

}  // namespace

int byte_tables(Graph& g) {
  int changed = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.dead || n.inputs.empty() || n.inputs[0] < 0) continue;
    if (n.op == "com.microsoft.QLinearSigmoid") {
      // 256 values, computed once (as ONNX Runtime tabulates them).
      int x = n.inputs[0];
      if (g.values[size_t(x)].dtype != te::DataType::u8()) continue;
      if (std::optional<ops::HostTensor> t = byte_table(g, x, {n})) look_up(g, i, x, std::move(*t)), ++changed;
    } else if (n.op == "com.microsoft.QLinearMul" && n.inputs.size() > 3 && n.inputs[3] >= 0) {
      // QLinearMul(x, table(x)) (a quantized SiLU): one table of x.
      for (int side : {0, 3}) {
        int x = n.inputs[size_t(3 - side)], tx = n.inputs[size_t(side)];
        int p = g.values[size_t(tx)].producer;
        if (p < 0 || g.nodes[size_t(p)].op != "tuner.LookUp" || g.nodes[size_t(p)].inputs[0] != x) continue;
        std::optional<ops::HostTensor> t = byte_table(g, x, {g.nodes[size_t(p)], n});
        if (!t) continue;
        look_up(g, i, x, std::move(*t));
        if (g.use_count(tx) == 0) g.nodes[size_t(p)].dead = true;  // no later pass removes dead code
        ++changed;
        break;
      }
    } else if (n.op == "com.microsoft.QLinearConcat") {
      size_t made = concat_in_one_scale(g, i);
      if (made > 0) i += made - 1, ++changed;
    }
  }
  return changed;
}

int pack_integer_conv_weights(Graph& g, int vector_lanes, int vector_registers) {
  int changed = 0;
  for (Node& n : g.nodes) {
    bool qlinear = n.op == "QLinearConv";
    // byte_dot_convs' convs keep the layout that pass chose.
    if (n.dead || (!qlinear && n.op != "ConvInteger") || n.attrs.count("tuner_pad_word")) continue;
    size_t wi = qlinear ? 3 : 1, zi = qlinear ? 5 : 3;
    if (n.inputs.size() <= wi || n.inputs[wi] < 0) continue;
    const Value& w = g.values[size_t(n.inputs[wi])];
    bool zp_ok = false;
    const Value* zp = constant_zero_point(g, n, zi, zp_ok);
    if (!w.is_constant() || w.shape.size() != 4 || !zp_ok) continue;
    auto group = n.attrs.find("group");
    int64_t groups = group == n.attrs.end() ? 1 : group->second.i, k = w.shape[0];
    if (groups != 1 && (groups <= 0 || w.shape[1] == 1 || k % groups != 0)) continue;
    const auto& out = g.values[size_t(n.outputs[0])].shape;
    int64_t block = conv_weight_block(k / groups, out.size() == 4 ? out[3] : 0, vector_lanes, vector_registers);
    if (block == 0) continue;
    n.inputs[wi] = g.add_constant(w.name + "_centered_packed", ops::pack_conv_weight(centre_on_zero_point(w, zp, 0), block));
    if (zp) n.inputs[zi] = -1;
    ++changed;
  }
  return changed;
}

namespace {

// B' [k, n] (int32 values in [-128, 127]) as words of 4 k's bytes packed [n/b, ceil(k/4), b],
// and its column sums.
std::pair<ops::HostTensor, ops::HostTensor> byte_word_panels(const ops::HostTensor& centred, int64_t block) {
  int64_t k = centred.shape[0], n = centred.shape[1];
  ops::HostTensor nk = ops::transpose_matrix(centred), sums({n}, te::DataType::i32());
  for (int64_t j = 0; j < n; ++j) {
    int64_t s = 0;
    for (int64_t i = 0; i < k; ++i) s += nk.get_int(j * k + i);
    sums.set_int(j, s);
  }
  nk.shape = {n, k, 1, 1};
  ops::HostTensor words = ops::byte_words(nk);
  words.shape = {n, words.shape[1]};
  return {ops::pack_matmul_weight(ops::transpose_matrix(words), block), std::move(sums)};
}

}  // namespace

int pack_matmul_weights(Graph& g, int vector_lanes, bool byte_dot) {
  int changed = 0;
  // (B, its zero point, block, byte words) -> its packed constant(s): a shared B is packed once.
  std::map<std::tuple<int, int, int64_t, bool>, std::pair<int, int>> packed;
  std::map<int, int> words_of;  // A -> its byte words
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    // Integer products: B centred on its zero point in int32, then packed (the zero point
    // input then absent). ONNX Runtime's QGemm only in byte dot form.
    bool qgemm = n.op == "com.microsoft.QGemm";
    bool integer = n.op == "MatMulInteger" || n.op == "QLinearMatMul" || qgemm;
    size_t bi = n.op == "MatMulInteger" ? 1 : integer ? 3 : 1, zi = bi + 2;
    if (n.dead || (n.op != "MatMul" && n.op != "Gemm" && !integer) || n.inputs.size() <= bi || n.inputs[bi] < 0) continue;
    if (n.attrs.count("b_block")) continue;
    auto attr_set = [&](const char* name) { auto t = n.attrs.find(name); return t != n.attrs.end() && t->second.i != 0; };
    bool trans_b = attr_set("transB");
    if ((trans_b && !qgemm) || (qgemm && attr_set("transA"))) continue;
    // Copies: adding values below may move g.values.
    Value a = g.values[size_t(n.inputs[0])], b = g.values[size_t(n.inputs[bi])];
    bool zp_ok = true;
    const Value* zp = integer ? constant_zero_point(g, n, zi, zp_ok) : nullptr;
    if (!b.is_constant() || b.shape.size() != 2 || a.shape.size() < 2 || !zp_ok) continue;
    if (integer ? b.dtype != te::DataType::u8() && b.dtype != te::DataType::i8() : !b.dtype.is_float()) continue;
    if (trans_b) {  // QGemm's B [n, k], its zero point per row: as B' [k, n], per column
      b.data = std::make_shared<const ops::HostTensor>(ops::transpose_matrix(*b.data));
      b.shape = b.data->shape;
    }
    ops::HostTensor centred = integer ? centre_on_zero_point(b, zp, 1) : ops::HostTensor();
    // Byte dot products (as byte_dot_convs): A's zero point one scalar, B' int8.
    int ai = n.inputs.size() > 2 ? n.inputs[2] : -1;
    bool words = integer && byte_dot && (a.dtype == te::DataType::u8() || a.dtype == te::DataType::i8()) &&
                 (ai < 0 || g.values[size_t(ai)].num_elements() == 1) && fits_int8(centred);
    if (qgemm && !words) continue;
    int64_t cols = b.shape[1];
    int64_t block = cols % (2 * vector_lanes) == 0 ? 2 * vector_lanes : cols % vector_lanes == 0 ? vector_lanes : 0;
    // Byte dots take half vectors natively (a 1000-class QGemm: 1000 = 125 x 8).
    if (block == 0 && words && vector_lanes >= 16 && cols % (vector_lanes / 2) == 0) block = vector_lanes / 2;
    if (block == 0) continue;
    auto [it, fresh] = packed.try_emplace({n.inputs[bi], zp ? n.inputs[zi] : -1, block, words}, std::pair{-1, -1});
    if (fresh && words) {
      auto [panels, sums] = byte_word_panels(centred, block);
      it->second = {g.add_constant(b.name + "_byte_words", std::move(panels)),
                    g.add_constant(b.name + "_column_sums", std::move(sums))};
    } else if (fresh) {
      it->second.first = g.add_constant(b.name + "_packed", ops::pack_matmul_weight(integer ? centred : *b.data, block));
    }
    Node node = n;  // a copy: nodes may be inserted before it
    node.inputs[bi] = it->second.first;
    if (zp) node.inputs[zi] = -1;
    node.attrs["b_block"].i = block;
    if (qgemm) node.attrs["transB"].i = 0;
    std::vector<Node> fresh_nodes;
    if (words) {
      auto [w, is_new] = words_of.try_emplace(node.inputs[0], -1);
      if (is_new) {
        ops::Shape ws = a.shape;
        ws.back() = (ws.back() + 3) / 4;
        std::map<std::string, Attr> attrs;
        attrs["axis"].i = -1;
        w->second = add_byte_words(g, node, ws, std::move(attrs), fresh_nodes);
      }
      node.inputs[0] = w->second;
      set_input(node, matmul_column_sums_input(node.op), it->second.second);
      node.attrs["tuner_a_offset"].i = a.dtype == te::DataType::i8() ? 128 : 0;
    }
    fresh_nodes.push_back(std::move(node));
    i += replace_node_by(g, i, std::move(fresh_nodes));
    ++changed;
  }
  return changed;
}

}  // namespace tuner::graph
