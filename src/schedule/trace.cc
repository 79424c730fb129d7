#include "schedule/trace.h"

#include <fmt/format.h>

#include <cstdint>

#include "support/error.h"

namespace tuner::schedule {

namespace {
constexpr const char* kNames[] = {
    "sample_perfect_tile", "sample_categorical", "sample_compute_location", "split", "fuse",
    "reorder", "annotate", "auto_unroll", "compute_at", "compute_root", "compute_inline",
    "reverse_compute_inline", "compute_location", "cache_write", "cache_read", "rfactor",
    "bind", "set_scope"};
constexpr int kNumKinds = sizeof(kNames) / sizeof(kNames[0]);
}  // namespace

const char* inst_name(InstKind k) { return kNames[int(k)]; }

Json Trace::to_json() const {
  Json insts_j = Json::array();
  for (auto& in : insts) {
    Json j;
    j["kind"] = inst_name(in.kind);
    if (!in.stage.empty()) j["stage"] = in.stage;
    if (!in.args.empty()) j["args"] = in.args;
    if (!in.strs.empty()) j["strs"] = in.strs;
    if (!in.probs.empty()) j["probs"] = in.probs;
    if (in.src >= 0) j["src"] = in.src;
    if (in.is_sampling()) j["decision"] = in.decision;
    insts_j.push_back(std::move(j));
  }
  Json j;
  j["version"] = kVersion;
  j["insts"] = std::move(insts_j);
  return j;
}

namespace {

// True for a whole number in [lo, hi] (hi >= 0); 2^64 parses as unsigned, 1e3 as a float.
bool whole_in(const Json& v, int64_t lo, int64_t hi) {
  if (v.is_number_unsigned()) return v.get<uint64_t>() <= uint64_t(hi);
  return v.is_number_integer() && v.get<int64_t>() >= lo && v.get<int64_t>() <= hi;
}

// The fields of trace instruction `index`, type-checked by name: a wrong type is one line
// saying which field of which instruction, not the JSON library's exception text.
class InstFields {
 public:
  InstFields(const Json& j, size_t index) : j_(j), index_(index) {
    USER_CHECK(j.is_object()) << where() << " is not an object";
  }
  bool has(const char* key) const { return j_.contains(key); }
  std::string str(const char* key) const {
    const Json& v = j_[key];
    USER_CHECK(v.is_string()) << where() << ": '" << key << "' must be a string";
    return v.get<std::string>();
  }
  std::vector<std::string> strs(const char* key) const {
    return list<std::string>(key, "strings", [](const Json& v) { return v.is_string(); });
  }
  std::vector<int64_t> ints(const char* key) const {
    return list<int64_t>(key, "64-bit integers",
                         [](const Json& v) { return whole_in(v, INT64_MIN, INT64_MAX); });
  }
  std::vector<double> numbers(const char* key) const {
    return list<double>(key, "numbers", [](const Json& v) { return v.is_number(); });
  }
  int small_int(const char* key) const {
    const Json& v = j_[key];
    USER_CHECK(whole_in(v, INT32_MIN, INT32_MAX))
        << where() << ": '" << key << "' must be an integer";
    return int(v.get<int64_t>());
  }

 private:
  // Field `key` as an array of T, every element passing `ok`.
  template <class T, class Ok>
  std::vector<T> list(const char* key, const char* of, Ok ok) const {
    const Json& a = j_[key];
    std::vector<T> out;
    for (size_t i = 0; a.is_array() && i < a.size(); ++i) {
      if (!ok(a[i])) break;
      out.push_back(a[i].get<T>());
    }
    USER_CHECK(a.is_array() && out.size() == a.size())
        << where() << ": '" << key << "' must be an array of " << of;
    return out;
  }
  std::string where() const { return "trace instruction " + std::to_string(index_); }
  const Json& j_;
  size_t index_;
};

}  // namespace

Trace Trace::from_json(const Json& j) {
  USER_CHECK(j.is_object() && j.contains("version") && j.contains("insts"))
      << "trace JSON needs 'version' and 'insts'";
  USER_CHECK(j["version"] == kVersion)
      << "trace format version " << j["version"].dump() << " is not supported (expected "
      << kVersion << ")";
  USER_CHECK(j["insts"].is_array()) << "trace 'insts' is not an array";
  Trace t;
  for (const Json& ij : j["insts"]) {
    InstFields f(ij, t.insts.size());
    USER_CHECK(f.has("kind")) << "trace instruction " << t.insts.size() << " has no 'kind'";
    std::string kind = f.str("kind");
    int k = 0;
    while (k < kNumKinds && kind != kNames[k]) ++k;
    USER_CHECK(k < kNumKinds) << "unknown trace instruction '" << kind << "'";
    Instruction in{InstKind(k)};
    if (f.has("stage")) in.stage = f.str("stage");
    if (f.has("args")) in.args = f.ints("args");
    if (f.has("strs")) in.strs = f.strs("strs");
    if (f.has("probs")) in.probs = f.numbers("probs");
    if (f.has("src")) in.src = f.small_int("src");
    if (f.has("decision")) in.decision = f.ints("decision");
    USER_CHECK(in.src >= -1) << "trace instruction " << t.insts.size() << " has a negative source";
    USER_CHECK(in.src < int(t.insts.size())) << "trace instruction refers to a later one";
    t.insts.push_back(std::move(in));
  }
  return t;
}

std::string Trace::pretty() const {
  std::string s;
  for (size_t i = 0; i < insts.size(); ++i) {
    auto& in = insts[i];
    s += fmt::format("{:3}: {}({}", i, inst_name(in.kind), in.stage);
    if (!in.args.empty()) s += fmt::format(", [{}]", fmt::join(in.args, ", "));
    if (!in.strs.empty()) s += fmt::format(", [{}]", fmt::join(in.strs, ", "));
    if (in.src >= 0) s += fmt::format(", from #{}", in.src);
    s += ")";
    if (in.is_sampling()) s += fmt::format(" -> [{}]", fmt::join(in.decision, ", "));
    s += "\n";
  }
  return s;
}

}  // namespace tuner::schedule
