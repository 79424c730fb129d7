#include "ops/registry.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <set>

#include "ops/registry_impl.h"

namespace tuner::ops {

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t p = s.find(sep, start);
    out.push_back(s.substr(start, p == std::string::npos ? std::string::npos : p - start));
    if (p == std::string::npos) return out;
    start = p + 1;
  }
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// Parses a whole string as int64; false when it is not one.
bool parse_int(const std::string& s, int64_t* v) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), *v);
  return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size();
}

std::vector<int64_t> parse_shape(const std::string& key, const std::string& v) {
  if (v == "scalar") return {};
  std::vector<int64_t> shape;
  for (auto& part : split(v, 'x')) {
    int64_t d;
    USER_CHECK(parse_int(trim(part), &d) && d > 0)
        << "parameter " << key << ": '" << v << "' is not a shape like 1x64x56x56";
    shape.push_back(d);
  }
  return shape;
}

}  // namespace

const std::string& Params::get(const std::string& key) const {
  auto it = values_.find(key);
  USER_CHECK(it != values_.end()) << "missing parameter " << key;
  return it->second;
}

int64_t Params::get_int(const std::string& key) const {
  const std::string& v = get(key);
  int64_t r;
  USER_CHECK(parse_int(trim(v), &r)) << "parameter " << key << ": '" << v
                                     << "' is not an integer";
  return r;
}

double Params::get_float(const std::string& key) const {
  const std::string& v = get(key);
  std::string t = trim(v);
  char* end = nullptr;
  double r = t.empty() ? 0 : std::strtod(t.c_str(), &end);
  USER_CHECK(!t.empty() && end == t.c_str() + t.size())
      << "parameter " << key << ": '" << v << "' is not a number";
  return r;
}

bool Params::get_bool(const std::string& key) const {
  const std::string& v = get(key);
  if (v == "1" || v == "true") return true;
  if (v == "0" || v == "false") return false;
  USER_ERROR() << "parameter " << key << ": '" << v << "' is not a boolean (0/1/true/false)";
}

std::vector<int64_t> Params::get_shape(const std::string& key) const {
  return parse_shape(key, trim(get(key)));
}

std::vector<int64_t> Params::get_ints(const std::string& key) const {
  std::string v = trim(get(key));
  if (v == "none") return {};
  std::vector<int64_t> out;
  for (auto& part : split(v, ',')) {
    int64_t x;
    USER_CHECK(parse_int(trim(part), &x))
        << "parameter " << key << ": '" << v << "' is not a list of integers like 0,2,1";
    out.push_back(x);
  }
  return out;
}

std::vector<std::vector<int64_t>> Params::get_shapes(const std::string& key) const {
  std::vector<std::vector<int64_t>> out;
  for (auto& part : split(trim(get(key)), ',')) out.push_back(parse_shape(key, trim(part)));
  return out;
}

te::DataType Params::get_dtype(const std::string& key) const {
  return te::DataType::parse(trim(get(key)));
}

std::string Params::str() const {
  std::string s;
  for (auto& [k, v] : values_) s += (s.empty() ? "" : " ") + k + "=" + v;
  return s;
}

const std::vector<OpDef>& op_registry() {
  static const std::vector<OpDef> ops = [] {
    std::vector<OpDef> v;
    detail::add_nn_ops(v);
    detail::add_elementwise_ops(v);
    detail::add_reduce_ops(v);
    detail::add_transform_ops(v);
    std::sort(v.begin(), v.end(), [](const OpDef& a, const OpDef& b) { return a.name < b.name; });
    for (size_t i = 1; i < v.size(); ++i)
      INTERNAL_CHECK(v[i].name != v[i - 1].name) << "op " << v[i].name << " registered twice";
    return v;
  }();
  return ops;
}

const OpDef& find_op(const std::string& name) {
  for (auto& op : op_registry())
    if (op.name == name) return op;
  std::string known;
  for (auto& op : op_registry()) known += (known.empty() ? "" : ", ") + op.name;
  USER_ERROR() << "unknown op '" << name << "'; known ops: " << known;
}

Params parse_params(const OpDef& op, const std::vector<std::string>& key_eq_value) {
  auto valid = [&] {
    std::string s;
    for (auto& p : op.params) s += (s.empty() ? "" : ", ") + p.name;
    return s;
  };
  Params params;
  for (auto& kv : key_eq_value) {
    size_t eq = kv.find('=');
    // Spaces around either side are a quoting slip ("shape= 7x13"), not part of the value.
    std::string key = trim(kv.substr(0, eq)),
                value = eq == std::string::npos ? "" : trim(kv.substr(eq + 1));
    USER_CHECK(eq != std::string::npos && !key.empty())
        << "op " << op.name << ": expected key=value, got '" << kv << "'";
    bool known = std::any_of(op.params.begin(), op.params.end(),
                             [&](const OpParam& p) { return p.name == key; });
    USER_CHECK(known) << "op " << op.name << " has no parameter '" << key
                      << "'; valid parameters: " << valid();
    USER_CHECK(!params.has(key)) << "op " << op.name << ": parameter " << key
                                 << " is given twice";
    USER_CHECK(!value.empty()) << "op " << op.name << ": parameter " << key << " is empty";
    params.set(key, value);
  }
  for (auto& p : op.params) {
    if (params.has(p.name)) continue;
    USER_CHECK(!p.default_value.empty()) << "op " << op.name << " needs parameter " << p.name
                                         << " (" << p.help << "); usage: " << op_usage(op);
    params.set(p.name, p.default_value);
  }
  return params;
}

std::string op_usage(const OpDef& op) {
  std::string s = op.name;
  for (auto& p : op.params)
    s += p.default_value.empty() ? " " + p.name + "=<" + p.name + ">"
                                 : " [" + p.name + "=" + p.default_value + "]";
  return s;
}

std::vector<HostTensor> random_inputs(const te::ComputeDAG& dag, uint64_t seed, double lo,
                                      double hi, int64_t int_lo, int64_t int_hi) {
  Rng rng(seed);
  std::vector<HostTensor> out;
  for (auto& t : dag.inputs()) {
    if (t.dtype().is_float())
      out.push_back(HostTensor::random(t.shape(), t.dtype(), rng, lo, hi));
    else if (t.dtype().is_uint())
      out.push_back(HostTensor::random(t.shape(), t.dtype(), rng,
                                       double(std::max<int64_t>(int_lo, 0)),
                                       double(std::max<int64_t>(int_hi, 0))));
    else
      out.push_back(HostTensor::random(t.shape(), t.dtype(), rng, double(int_lo), double(int_hi)));
  }
  return out;
}

}  // namespace tuner::ops
