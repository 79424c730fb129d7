#include "graph/converters.h"

#include <algorithm>
#include <map>

#include "graph/converters_impl.h"
#include "ops/elementwise.h"
#include "support/error.h"

namespace tuner::graph {

ConvertContext::ConvertContext(const Graph& g, const Node& n, std::vector<te::Tensor> inputs,
                               std::string prefix)
    : graph_(g), node_(n), inputs_(std::move(inputs)), prefix_(std::move(prefix)) {}

const te::Tensor& ConvertContext::input(size_t i) const {
  if (!has_input(i)) fail("input " + std::to_string(i) + " is missing");
  if (empty_constant(i)) fail("input " + std::to_string(i) + " is empty (empty tensors are not supported)");
  INTERNAL_CHECK(i < inputs_.size() && inputs_[i] != nullptr)
      << describe(node_) << ": no te tensor for input " << i;
  return inputs_[i];
}

const Value& ConvertContext::input_value(size_t i) const {
  if (!has_input(i)) fail("input " + std::to_string(i) + " is missing");
  return graph_.values.at(node_.inputs[i]);
}

const ops::HostTensor& ConvertContext::constant(size_t i, const char* what) const {
  const Value& v = input_value(i);
  if (!v.is_constant())
    fail(std::string("input ") + std::to_string(i) + " (" + what +
         ") must be a constant; Tuner compiles static graphs only");
  return *v.data;
}

std::vector<int64_t> ConvertContext::constant_ints(size_t i, const char* what) const {
  const ops::HostTensor& t = constant(i, what);
  if (!t.dtype.is_integer())
    fail(std::string("input ") + std::to_string(i) + " (" + what + ") must be integers, not " +
         t.dtype.str());
  std::vector<int64_t> out(size_t(t.num_elements()));
  for (int64_t k = 0; k < t.num_elements(); ++k) out[size_t(k)] = t.get_int(k);
  return out;
}

const Attr& ConvertContext::attr(const std::string& key) const {
  auto it = node_.attrs.find(key);
  if (it == node_.attrs.end()) fail("required attribute '" + key + "' is missing");
  return it->second;
}

int64_t ConvertContext::attr_int(const std::string& key, int64_t def) const {
  auto it = node_.attrs.find(key);
  if (it == node_.attrs.end()) return def;
  if (it->second.kind != Attr::Int) fail("attribute '" + key + "' must be an integer");
  return it->second.i;
}

double ConvertContext::attr_float(const std::string& key, double def) const {
  auto it = node_.attrs.find(key);
  if (it == node_.attrs.end()) return def;
  if (it->second.kind == Attr::Int) return double(it->second.i);
  if (it->second.kind != Attr::Float) fail("attribute '" + key + "' must be a float");
  return it->second.f;
}

std::string ConvertContext::attr_string(const std::string& key, const std::string& def) const {
  auto it = node_.attrs.find(key);
  if (it == node_.attrs.end()) return def;
  if (it->second.kind != Attr::String) fail("attribute '" + key + "' must be a string");
  return it->second.s;
}

std::vector<int64_t> ConvertContext::attr_ints(const std::string& key,
                                               const std::vector<int64_t>& def) const {
  auto it = node_.attrs.find(key);
  if (it == node_.attrs.end()) return def;
  if (it->second.kind != Attr::Ints) fail("attribute '" + key + "' must be a list of integers");
  return it->second.ints;
}

std::vector<double> ConvertContext::attr_floats(const std::string& key,
                                                const std::vector<double>& def) const {
  auto it = node_.attrs.find(key);
  if (it == node_.attrs.end()) return def;
  if (it->second.kind != Attr::Floats) fail("attribute '" + key + "' must be a list of floats");
  return it->second.floats;
}

std::vector<std::string> ConvertContext::attr_strings(const std::string& key,
                                                     const std::vector<std::string>& def) const {
  auto it = node_.attrs.find(key);
  if (it == node_.attrs.end()) return def;
  if (it->second.kind != Attr::Strings) fail("attribute '" + key + "' must be a list of strings");
  return it->second.strings;
}

std::string ConvertContext::name(const std::string& suffix) const {
  return suffix.empty() ? prefix_ : prefix_ + "_" + suffix;
}

void ConvertContext::fail(const std::string& message) const {
  throw UserError(describe(node_) + ": " + message);
}

namespace {

const std::map<std::string, Converter>& registry() {
  static const std::map<std::string, Converter> table = [] {
    std::vector<Converter> all;
    detail::add_conv_converters(all);
    detail::add_nn_converters(all);
    detail::add_elementwise_converters(all);
    detail::add_shape_converters(all);
    detail::add_rnn_converters(all);
    detail::add_quant_converters(all);
    std::map<std::string, Converter> m;
    for (Converter& c : all) {
      std::string op = c.op;
      INTERNAL_CHECK(m.emplace(op, std::move(c)).second) << "converter " << op << " twice";
    }
    return m;
  }();
  return table;
}

}  // namespace

const Converter* find_converter(const std::string& op) {
  auto it = registry().find(op);
  return it == registry().end() ? nullptr : &it->second;
}

std::vector<std::string> supported_ops(const std::string& domain) {
  std::vector<std::string> out;
  for (const auto& [op, c] : registry()) {
    size_t dot = op.rfind('.');  // "com.microsoft.QLinearAdd"; "tuner." is the passes' own
    std::string d = dot == std::string::npos ? "" : op.substr(0, dot);
    if (d == domain && d != "tuner") out.push_back(dot == std::string::npos ? op : op.substr(dot + 1));
  }
  return out;
}

std::vector<ConvertOutput> convert_node(const Graph& g, const Node& n,
                                        const std::vector<te::Tensor>& inputs,
                                        const std::string& prefix) {
  const Converter* c = find_converter(n.op);
  USER_CHECK(c) << describe(n) << ": unsupported operator " << n.op << " (opset " << g.opset
                << ")";
  std::vector<te::Tensor> in = inputs;
  bool widen =
      c->half != HalfInputs::kAsIs && std::any_of(in.begin(), in.end(), [](const te::Tensor& t) {
        return t != nullptr && t->dtype == te::DataType::f16();
      });
  for (size_t i = 0; widen && i < in.size(); ++i)
    if (in[i] != nullptr && in[i]->dtype == te::DataType::f16())
      in[i] = ops::cast(in[i], te::DataType::f32(), prefix + "_f32_" + std::to_string(i));
  ConvertContext ctx(g, n, in, prefix);
  std::vector<ConvertOutput> out;
  try {
    out = c->fn(ctx);
    for (size_t k = 0; widen && k < out.size(); ++k)
      if (auto* t = std::get_if<te::Tensor>(&out[k]);
          t && (*t)->dtype == te::DataType::f32() &&
          (k == 0 || c->half != HalfInputs::kInFloat32KeepStats))
        *t = ops::cast(*t, te::DataType::f16(), prefix + "_f16_" + std::to_string(k));
  } catch (const UserError& e) {
    // Errors from the op library start with the te tensor's name (prefix, prefix_suffix),
    // which is Tuner's, not the model's: say which model node it was instead.
    std::string msg = e.what(), where = describe(n) + ": ";
    size_t colon = msg.find(": ");
    if (colon != std::string::npos && msg.find(' ') > colon &&
        (msg.compare(0, colon, prefix) == 0 || msg.rfind(prefix + "_", 0) == 0))
      msg.erase(0, colon + 2);
    throw UserError(msg.compare(0, where.size(), where) == 0 ? msg : where + msg);
  }
  USER_CHECK(out.size() >= n.outputs.size())
      << describe(n) << ": produces " << out.size() << " outputs, the model lists "
      << n.outputs.size();
  return out;
}

}  // namespace tuner::graph
