#include "graph/onnx_import.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "graph/converters.h"
#include "graph/infer.h"
#include "graph/tensor_proto.h"
#include "support/atomic_file.h"
#include "support/error.h"
#include "support/log.h"
#include "support/read_file.h"

namespace tuner::graph {

namespace fs = std::filesystem;

namespace {

// Debian's libonnx (1.12) knows opsets up to 17. Opset 18 changed a few operators' signatures
// (axes as an input of the Reduce family and Pad, Split's num_outputs, Resize's new
// attributes) and added Mish and GroupNormalization; 19-25 added attributes (AveragePool's
// dilations, Cast's saturate, block quantization, GroupNormalization's stash_type), element
// types and operators (Gelu, RMSNormalization, Swish); the rest of their changes are values
// of attributes (Pad's wrap, Resize's half_pixel_symmetric) or the converters' business
// (GroupNormalization's scale per channel from 21). The checker sees a copy in opset 17 form
// with those differences removed, so it still checks the graph's structure, names, types and
// every other node; the converters read the newer forms themselves.
// A graph output may leave its shape out (ONNX Runtime runs such models) but the checker
// requires one: the view gives it an empty one (Tuner's shapes come from the converters).
// Newer exporters write IR versions the checker refuses outright; the view carries the
// checker's own (what a newer IR adds, such as new element types, the converters refuse).
bool lacks_shape(const onnx::ValueInfoProto& v) {
  return v.type().has_tensor_type() && !v.type().tensor_type().has_shape();
}

bool output_without_shape(const onnx::ModelProto& m) {
  const auto& outs = m.graph().output();
  return std::any_of(outs.begin(), outs.end(), lacks_shape);
}

bool needs_checker_view(const onnx::ModelProto& m, int64_t opset) {
  return opset > 17 || m.ir_version() > onnx::IR_VERSION || output_without_shape(m);
}

onnx::ModelProto checker_view(const onnx::ModelProto& m, int64_t opset) {
  onnx::ModelProto v = m;
  if (v.ir_version() > onnx::IR_VERSION) v.set_ir_version(onnx::IR_VERSION);
  for (auto& o : *v.mutable_graph()->mutable_output())
    if (lacks_shape(o)) o.mutable_type()->mutable_tensor_type()->mutable_shape();
  if (opset <= 17) return v;
  for (auto& o : *v.mutable_opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") o.set_version(17);
  static const std::set<std::string> axes_input = {
      "ReduceMax", "ReduceMin", "ReduceMean", "ReduceProd", "ReduceL1", "ReduceL2",
      "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"};
  auto drop_attrs = [](onnx::NodeProto& n, std::set<std::string> names) {
    auto* a = n.mutable_attribute();
    for (int i = a->size() - 1; i >= 0; --i)
      if (names.count(a->Get(i).name())) a->DeleteSubrange(i, 1);
  };
  for (auto& n : *v.mutable_graph()->mutable_node()) {
    if (!n.domain().empty() && n.domain() != "ai.onnx") continue;
    if (axes_input.count(n.op_type())) {
      while (n.input_size() > 1) n.mutable_input()->RemoveLast();
      drop_attrs(n, {"noop_with_empty_axes"});
    } else if (n.op_type() == "Pad") {
      while (n.input_size() > 3) n.mutable_input()->RemoveLast();
    } else if (n.op_type() == "Split") {
      drop_attrs(n, {"num_outputs"});
    } else if (n.op_type() == "Resize") {
      drop_attrs(n, {"antialias", "axes", "keep_aspect_ratio_policy"});
    } else if (n.op_type() == "Mish" || n.op_type() == "Gelu" || n.op_type() == "Swish") {
      n.set_op_type("Relu");
      drop_attrs(n, {"approximate", "alpha"});
    } else if (n.op_type() == "GroupNormalization") {
      n.set_op_type("InstanceNormalization");
      drop_attrs(n, {"num_groups", "stash_type"});
    } else if (n.op_type() == "RMSNormalization") {  // LayerNormalization without a bias
      n.set_op_type("LayerNormalization");
    } else if (n.op_type() == "AveragePool") {
      drop_attrs(n, {"dilations"});
    } else if (n.op_type() == "Cast" || n.op_type() == "CastLike") {
      drop_attrs(n, {"saturate"});
    } else if (n.op_type() == "QuantizeLinear" || n.op_type() == "DequantizeLinear") {
      drop_attrs(n, {"saturate", "block_size", "output_dtype"});
    }
  }
  return v;
}

// ONNX's messages span lines (the checker prints the offending node on its own line): join
// them into one, at most 300 characters.
std::string first_line(const std::string& s) {
  std::string line;
  for (char c : s) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    if (c != ' ' || (!line.empty() && line.back() != ' ')) line += c;
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line.size() > 300 ? line.substr(0, 300) + "..." : line;
}

// A node's operator as the graph names it: the type in the default domain, else the domain
// and the type ("com.microsoft.QLinearAdd": ONNX Runtime's operators of quantized models).
std::string graph_op(const onnx::NodeProto& n) {
  bool default_domain = n.domain().empty() || n.domain() == "ai.onnx";
  return default_domain ? n.op_type() : n.domain() + "." + n.op_type();
}

onnx::ModelProto read_model(const std::string& path) {
  std::string bytes = read_file_bytes(path, (size_t(1) << 31) - 1,
                                      "ONNX files over 2 GiB must keep their weights as external data");
  USER_CHECK(!bytes.empty()) << path << ": empty file, not an ONNX model";
  onnx::ModelProto m;
  USER_CHECK(m.ParseFromString(bytes))
      << path << ": not an ONNX model (the file does not parse as an ONNX ModelProto)";
  // A graph without nodes is valid (its outputs are inputs or initializers).
  USER_CHECK(m.has_graph()) << path << ": not an ONNX model (no graph)";
  return m;
}

int64_t default_opset(const onnx::ModelProto& m, const std::string& path) {
  int64_t opset = -1;
  for (const auto& o : m.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
  USER_CHECK(opset >= 0) << path << ": the model imports no default-domain opset";
  USER_CHECK(opset >= kMinOpset && opset <= kMaxOpset)
      << path << ": opset " << opset << " is not supported (Tuner reads opsets " << kMinOpset
      << " to " << kMaxOpset << ")";
  return opset;
}

// Fixes every model input's shape (overrides first); dynamic dimensions left without an
// override are an error naming the inputs.
void fix_input_shapes(onnx::ModelProto& m, const std::set<std::string>& initializers,
                      const ImportOptions& opts, const std::string& path) {
  std::vector<std::string> dynamic;
  std::set<std::string> used;
  for (auto& in : *m.mutable_graph()->mutable_input()) {
    if (initializers.count(in.name())) continue;
    USER_CHECK(in.type().has_tensor_type())
        << path << ": input '" << in.name() << "' is not a tensor";
    auto* tt = in.mutable_type()->mutable_tensor_type();
    auto it = opts.input_shapes.find(in.name());
    if (it != opts.input_shapes.end()) {
      used.insert(in.name());
      const ops::Shape& s = it->second;
      if (tt->has_shape()) {
        USER_CHECK(tt->shape().dim_size() == int(s.size()))
            << path << ": --input-shape gives input '" << in.name() << "' rank " << s.size()
            << ", the model says " << tt->shape().dim_size();
        for (int d = 0; d < tt->shape().dim_size(); ++d) {
          const auto& dim = tt->shape().dim(d);
          USER_CHECK(!dim.has_dim_value() || dim.dim_value() == s[size_t(d)])
              << path << ": --input-shape " << in.name() << ":" << te::shape_str(s)
              << " disagrees with the model's dimension " << d << " = " << dim.dim_value();
        }
      }
      tt->mutable_shape()->clear_dim();
      for (int64_t d : s) tt->mutable_shape()->add_dim()->set_dim_value(d);
      continue;
    }
    bool fixed = tt->has_shape();
    for (const auto& dim : tt->shape().dim()) {
      if (!dim.has_dim_value()) fixed = false;
      USER_CHECK(!dim.has_dim_value() || dim.dim_value() >= 0)
          << path << ": input '" << in.name() << "' has a negative dimension ("
          << dim.dim_value() << "): the model is malformed";
      USER_CHECK(!dim.has_dim_value() || dim.dim_value() != 0)
          << path << ": input '" << in.name() << "' has an empty dimension (empty tensors are "
          << "not supported)";
    }
    if (!fixed) {
      std::string dims;
      for (const auto& dim : tt->shape().dim())
        dims += (dims.empty() ? "" : "x") +
                (dim.has_dim_value() ? std::to_string(dim.dim_value())
                                     : (dim.dim_param().empty() ? "?" : dim.dim_param()));
      dynamic.push_back("'" + in.name() + "' (" + (tt->has_shape() ? dims : "no shape") + ")");
    }
  }
  for (const auto& [name, s] : opts.input_shapes)
    USER_CHECK(used.count(name)) << path << ": --input-shape names '" << name
                                 << "', which is not an input of the model";
  if (!dynamic.empty()) {
    std::string list;
    for (const auto& d : dynamic) list += (list.empty() ? "" : ", ") + d;
    USER_ERROR() << path << ": input " << list
                 << " has a dynamic shape; fix it with --input-shape NAME:1x3x224x224";
  }
}

Attr convert_attr(const onnx::AttributeProto& a, const std::string& where) {
  Attr out;
  switch (a.type()) {
    case onnx::AttributeProto::INT: out.kind = Attr::Int, out.i = a.i(); break;
    case onnx::AttributeProto::FLOAT: out.kind = Attr::Float, out.f = a.f(); break;
    case onnx::AttributeProto::STRING: out.kind = Attr::String, out.s = a.s(); break;
    case onnx::AttributeProto::INTS:
      out.kind = Attr::Ints, out.ints.assign(a.ints().begin(), a.ints().end());
      break;
    case onnx::AttributeProto::FLOATS:
      out.kind = Attr::Floats, out.floats.assign(a.floats().begin(), a.floats().end());
      break;
    case onnx::AttributeProto::STRINGS:  // RNN activations
      out.kind = Attr::Strings, out.strings.assign(a.strings().begin(), a.strings().end());
      break;
    case onnx::AttributeProto::TENSOR:
      out.kind = Attr::Tensor;
      out.tensor = std::make_shared<const ops::HostTensor>(
          tensor_from_proto(a.t(), "", where + " attribute " + a.name()));
      break;
    default:
      USER_ERROR() << where << ": attribute '" << a.name() << "' of type "
                   << onnx::AttributeProto::AttributeType_Name(a.type()) << " is not supported";
  }
  return out;
}

// Whether s is UTF-8 text without control characters: names end up in JSON (tasks, records,
// the artifact's plan) and in one-line error messages.
bool printable_utf8(const std::string& s) {
  auto byte = [&](size_t i) { return i < s.size() ? static_cast<unsigned char>(s[i]) : 0u; };
  for (size_t i = 0; i < s.size();) {
    unsigned c = byte(i);
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7f) return false;
      ++i;
      continue;
    }
    // The second byte's range rules out overlong forms, surrogates and code points > U+10FFFF.
    int extra = c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : 0;
    if (extra == 0) return false;
    unsigned lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
    unsigned hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
    if (byte(i + 1) < lo || byte(i + 1) > hi) return false;
    for (int k = 2; k <= extra; ++k)
      if ((byte(i + size_t(k)) & 0xc0) != 0x80) return false;
    i += size_t(extra) + 1;
  }
  return true;
}

// Every name of the graph (values, nodes, operators) as printable UTF-8.
void check_names(const onnx::GraphProto& gp, const std::string& path) {
  auto check = [&](const std::string& name, const std::string& what) {
    USER_CHECK(printable_utf8(name)) << path << ": " << what
                                     << " is not printable UTF-8 text (Tuner prints names in its "
                                        "messages and kernel labels: rename it)";
  };
  check(gp.name(), "the graph's name");
  auto values = [&](const auto& list, const char* what) {
    for (int i = 0; i < list.size(); ++i) check(list[i].name(), fmt::format("{} {}'s name", what, i));
  };
  values(gp.input(), "graph input");
  values(gp.output(), "graph output");
  values(gp.initializer(), "initializer");
  values(gp.value_info(), "value_info");
  for (int i = 0; i < gp.node_size(); ++i) {
    const auto& n = gp.node(i);
    std::string where = fmt::format("node {}", i);
    check(n.name(), where + "'s name");
    check(n.op_type(), where + "'s operator type");
    check(n.domain(), where + "'s domain");
    for (int k = 0; k < n.input_size(); ++k) check(n.input(k), fmt::format("{}'s input {}", where, k));
    for (int k = 0; k < n.output_size(); ++k) check(n.output(k), fmt::format("{}'s output {}", where, k));
  }
}

// ONNX's own shape inference, as a cross-check of the converters' shapes.
void check_against_onnx_shapes(onnx::ModelProto& m, const Graph& g, const std::string& path) {
  // libonnx 1.12 keeps a ceil_mode pooling window that starts in the end padding; later ONNX,
  // ONNX Runtime and PyTorch drop it, as the converter does (2x2, kernel 2, stride 2, pads
  // 0,0,1,1: 1x1, not 2x2). Such a pooling's outputs and everything computed from them are
  // not cross-checked (nodes are in topological order), and when the model declares the
  // right shapes, inference itself fails: then nothing is.
  std::set<std::string> tainted;
  for (const auto& n : m.graph().node()) {
    bool taint = false;
    if (n.op_type() == "MaxPool" || n.op_type() == "AveragePool" || n.op_type() == "LpPool")
      for (const auto& at : n.attribute()) taint = taint || (at.name() == "ceil_mode" && at.i());
    for (const auto& in : n.input()) taint = taint || tainted.count(in);
    if (taint) tainted.insert(n.output().begin(), n.output().end());
  }
  try {
    onnx::shape_inference::InferShapes(m);
  } catch (const std::exception& e) {
    if (!tainted.empty()) return;
    USER_ERROR() << path << ": ONNX shape inference failed: " << first_line(e.what());
  }
  std::map<std::string, const onnx::ValueInfoProto*> inferred;
  for (const auto& vi : m.graph().value_info()) inferred[vi.name()] = &vi;
  for (const auto& vi : m.graph().output()) inferred[vi.name()] = &vi;
  for (const auto& name : tainted) inferred.erase(name);
  for (const Value& v : g.values) {
    auto it = inferred.find(v.name);
    if (it == inferred.end() || !it->second->type().tensor_type().has_shape()) continue;
    const auto& shape = it->second->type().tensor_type().shape();
    bool is_static = shape.dim_size() == int(v.shape.size());
    for (const auto& d : shape.dim()) is_static = is_static && d.has_dim_value();
    if (!is_static) continue;
    ops::Shape s;
    for (const auto& d : shape.dim()) s.push_back(d.dim_value());
    USER_CHECK(s == v.shape) << path << ": value '" << v.name << "' has shape "
                             << te::shape_str(v.shape) << " here but " << te::shape_str(s)
                             << " by ONNX shape inference";
  }
}

}  // namespace

void parse_input_shape(const std::string& spec, ImportOptions& opts) {
  size_t colon = spec.rfind(':');
  USER_CHECK(colon != std::string::npos && colon > 0)
      << "--input-shape '" << spec << "': expected NAME:DIMS such as data:1x3x224x224";
  ops::Shape s;
  std::string dims = spec.substr(colon + 1);
  size_t pos = 0;
  while (pos <= dims.size()) {
    size_t x = dims.find('x', pos);
    std::string part = dims.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
    USER_CHECK(!part.empty() && part.find_first_not_of("0123456789") == std::string::npos &&
               part.size() < 10)
        << "--input-shape '" << spec << "': bad dimension '" << part << "'";
    s.push_back(std::stoll(part));
    USER_CHECK(s.back() > 0) << "--input-shape '" << spec << "': dimensions must be positive";
    if (x == std::string::npos) break;
    pos = x + 1;
  }
  bool fresh = opts.input_shapes.emplace(spec.substr(0, colon), s).second;
  USER_CHECK(fresh) << "--input-shape gives input '" << spec.substr(0, colon) << "' twice";
}

Graph import_onnx(const std::string& path, const ImportOptions& opts) {
  onnx::ModelProto m = read_model(path);
  protect_input_file(path, "model being read");
  check_names(m.graph(), path);
  USER_CHECK(m.graph().output_size() > 0) << path << ": the model has no outputs";
  Graph g;
  g.opset = default_opset(m, path);
  g.name = m.graph().name().empty() ? fs::path(path).stem().string() : m.graph().name();
  std::set<std::string> initializer_names;
  for (const auto& t : m.graph().initializer()) initializer_names.insert(t.name());
  fix_input_shapes(m, initializer_names, opts, path);
  std::string base_dir = fs::path(path).parent_path().string();
  if (base_dir.empty()) base_dir = ".";
  // Every unsupported operator at once, before the checker: it would name only the first
  // operator it has no schema for (operators newer than libonnx's opset 17 among them).
  // Nodes of one type and reason are listed once, with their count and the first's name (a
  // quantized efficientnet has 130 such nodes of two types).
  struct Unsupported {
    std::string op, first, why;
    int count = 0;
  };
  std::vector<Unsupported> unsupported;
  int nodes = 0;
  for (int i = 0; i < m.graph().node_size(); ++i) {
    const auto& n = m.graph().node(i);
    bool default_domain = n.domain().empty() || n.domain() == "ai.onnx";
    const Converter* c = find_converter(graph_op(n));
    if (c && (!default_domain || g.opset >= c->since)) continue;
    std::string why = !default_domain ? "domain " + n.domain()
                      : c ? fmt::format("opset {}; it is in opsets from {}", g.opset, c->since)
                          : "opset " + std::to_string(g.opset);
    auto it = std::find_if(unsupported.begin(), unsupported.end(),
                           [&](const Unsupported& u) { return u.op == n.op_type() && u.why == why; });
    if (it == unsupported.end()) unsupported.push_back({n.op_type(), n.name(), why, 0}), it = unsupported.end() - 1;
    ++it->count, ++nodes;
  }
  if (!unsupported.empty()) {
    std::string list;
    for (const auto& u : unsupported)
      list += (list.empty() ? "" : ", ") + u.op + (u.count > 1 ? fmt::format(" x {}, the first", u.count) : "") +
              " '" + u.first + "' (" + u.why + ")";
    USER_ERROR() << path << ": " << nodes << " unsupported operator" << (nodes > 1 ? "s: " : ": ") << list
                 << " (`tuner op list --onnx` lists the supported ones)";
  }

  if (!opts.external_data)
    for (const auto& t : m.graph().initializer())
      USER_CHECK(t.data_location() != onnx::TensorProto::EXTERNAL && t.external_data().empty())
          << path << ": initializer '" << t.name() << "' keeps its data in an external file, "
          << "which is not sent with the model; save the model with its weights inside";
  {
    // The checker looks for external data files relative to the working directory: show it
    // their paths in the model's folder for the check, then put the model's own back (the
    // loader applies the strict rules: inside the model's folder, in range).
    std::vector<std::pair<onnx::StringStringEntryProto*, std::string>> relocated;
    for (auto& t : *m.mutable_graph()->mutable_initializer())
      for (auto& kv : *t.mutable_external_data())
        if (kv.key() == "location" && fs::path(kv.value()).is_relative()) {
          relocated.emplace_back(&kv, kv.value());
          kv.set_value((fs::path(base_dir) / kv.value()).string());
        }
    try {
      // A copy only when needed: the model may hold hundreds of MB of weights.
      if (needs_checker_view(m, g.opset)) onnx::checker::check_model(checker_view(m, g.opset));
      else onnx::checker::check_model(m);
    } catch (const std::exception& e) {
      USER_ERROR() << path << ": invalid ONNX model: " << first_line(e.what());
    }
    for (auto& [kv, location] : relocated) kv->set_value(location);
  }

  std::map<std::string, int> by_name;
  for (const auto& t : m.graph().initializer()) {
    USER_CHECK(!by_name.count(t.name())) << path << ": initializer '" << t.name() << "' twice";
    by_name[t.name()] =
        g.add_constant(t.name(), tensor_from_proto(t, base_dir, "initializer '" + t.name() + "'"));
  }
  // ONNX lets a caller override an initializer that is also a graph input (older exporters
  // list every weight so); Tuner folds and packs weights, so they stay constants: say so once.
  std::vector<std::string> overridable;
  for (const auto& in : m.graph().input())
    if (initializer_names.count(in.name())) overridable.push_back("'" + in.name() + "'");
  if (overridable.size() == 1)
    log(LogLevel::Info, "note: {}: initializer {} is also a graph input; it is compiled as a "
        "constant (it cannot be given at run time)", path, overridable[0]);
  else if (overridable.size() > 1)
    log(LogLevel::Info, "note: {}: {} initializers are also graph inputs ({}{}); they are "
        "compiled as constants (they cannot be given at run time)", path, overridable.size(),
        fmt::join(overridable.begin(), overridable.begin() + std::min<size_t>(3, overridable.size()), ", "),
        overridable.size() > 3 ? ", ..." : "");
  for (const auto& in : m.graph().input()) {
    if (initializer_names.count(in.name())) continue;
    Value v;
    v.name = in.name();
    v.dtype = dtype_from_onnx(in.type().tensor_type().elem_type(), "input '" + in.name() + "'");
    for (const auto& d : in.type().tensor_type().shape().dim()) v.shape.push_back(d.dim_value());
    int id = g.add_value(std::move(v));
    by_name[in.name()] = id;
    g.inputs.push_back(id);
  }
  for (int i = 0; i < m.graph().node_size(); ++i) {
    const auto& pn = m.graph().node(i);
    Node n;
    n.op = graph_op(pn);
    n.name = pn.name().empty() ? pn.op_type() + "_" + std::to_string(i) : pn.name();
    std::string where = describe(n);
    for (const auto& a : pn.attribute()) n.attrs[a.name()] = convert_attr(a, where);
    for (const auto& in : pn.input()) {
      if (in.empty()) {
        n.inputs.push_back(-1);
        continue;
      }
      auto it = by_name.find(in);
      USER_CHECK(it != by_name.end()) << path << ": " << where << " reads '" << in
                                      << "', which no earlier node produces (a cycle or a "
                                      << "missing value)";
      n.inputs.push_back(it->second);
    }
    for (const auto& out : pn.output()) {
      Value v;
      v.name = out.empty() ? n.name + "_unused" + std::to_string(n.outputs.size()) : out;
      int id = g.add_value(std::move(v));
      if (!out.empty()) by_name[out] = id;
      n.outputs.push_back(id);
    }
    g.add_node(std::move(n));
  }
  for (const auto& out : m.graph().output()) {
    auto it = by_name.find(out.name());
    USER_CHECK(it != by_name.end()) << path << ": output '" << out.name() << "' is never produced";
    g.outputs.push_back(it->second);
  }
  infer_and_fold(g);
  // The converters also take a packed rank-5 conv weight (the layout passes make those later);
  // from the model it is an error, and libonnx's conv inference would crash on it.
  for (const Node& n : g.nodes)
    if ((n.op == "Conv" || n.op == "ConvTranspose") && n.inputs.size() >= 2 && n.inputs[1] >= 0)
      USER_CHECK(g.values[size_t(n.inputs[1])].shape.size() == g.values[size_t(n.inputs[0])].shape.size())
          << path << ": " << describe(n) << ": weight W must have the rank of X";
  // libonnx's inference has no opset 18 schemas (it would reduce over every axis where axes
  // became an input): opset 18 models rely on the converters' shapes alone.
  if (g.opset <= 17) check_against_onnx_shapes(m, g, path);
  return g;
}

}  // namespace tuner::graph
