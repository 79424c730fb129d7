#include "schedule/trace.h"

#include <fmt/format.h>

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

Trace Trace::from_json(const Json& j) {
  USER_CHECK(j.is_object() && j.contains("version") && j.contains("insts"))
      << "trace JSON needs 'version' and 'insts'";
  USER_CHECK(j["version"] == kVersion)
      << "trace format version " << j["version"].dump() << " is not supported (expected "
      << kVersion << ")";
  USER_CHECK(j["insts"].is_array()) << "trace 'insts' is not an array";
  Trace t;
  try {
    for (auto& ij : j.at("insts")) {
      Instruction in{};
      std::string kind = ij.at("kind").get<std::string>();
      int k = 0;
      while (k < kNumKinds && kind != kNames[k]) ++k;
      USER_CHECK(k < kNumKinds) << "unknown trace instruction '" << kind << "'";
      in.kind = InstKind(k);
      if (ij.contains("stage")) in.stage = ij["stage"].get<std::string>();
      if (ij.contains("args")) in.args = ij["args"].get<std::vector<int64_t>>();
      if (ij.contains("strs")) in.strs = ij["strs"].get<std::vector<std::string>>();
      if (ij.contains("probs")) in.probs = ij["probs"].get<std::vector<double>>();
      if (ij.contains("src")) in.src = ij["src"].get<int>();
      if (ij.contains("decision")) in.decision = ij["decision"].get<std::vector<int64_t>>();
      USER_CHECK(in.src >= -1) << "trace instruction " << t.insts.size() << " has a negative source";
      USER_CHECK(in.src < int(t.insts.size())) << "trace instruction refers to a later one";
      t.insts.push_back(std::move(in));
    }
  } catch (const nlohmann::json::exception& e) {
    USER_ERROR() << "malformed trace JSON: " << e.what();
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
