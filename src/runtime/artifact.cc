#include "runtime/artifact.h"

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "support/atomic_file.h"
#include "support/error.h"
#include "support/hash.h"
#include "support/json.h"

namespace tuner::runtime {

namespace {

constexpr char kMagic[8] = {'T', 'U', 'N', 'E', 'R', 'M', 'D', 'L'};
// 2: a checksum ends the file (a corrupt kernel library would crash the loading process).
// Version 1 files (no checksum) are refused: a damaged one crashed the process loading it.
constexpr uint32_t kVersion = 2;

uint64_t sections_checksum(const std::string& plan, const std::string& so, const std::string& weights) {
  uint64_t h = 0;
  for (const std::string* s : {&plan, &so, &weights}) {  // each length, then its bytes
    uint64_t n = s->size();
    h = checksum64(*s, checksum64(std::string_view(reinterpret_cast<const char*>(&n), sizeof n), h));
  }
  return h;
}

const char* storage_name(Storage s) {
  switch (s) {
    case Storage::Input: return "input";
    case Storage::Output: return "output";
    case Storage::Weight: return "weight";
    case Storage::Arena: return "arena";
  }
  return "?";
}

Storage parse_storage(const std::string& s) {
  if (s == "input") return Storage::Input;
  if (s == "output") return Storage::Output;
  if (s == "weight") return Storage::Weight;
  USER_CHECK(s == "arena") << "bad buffer storage '" << s << "' in the model plan";
  return Storage::Arena;
}

}  // namespace

int dtype_bytes(const std::string& dtype) {
  if (dtype == "float32" || dtype == "int32") return 4;
  if (dtype == "float16") return 2;
  if (dtype == "int64") return 8;
  if (dtype == "int8" || dtype == "uint8" || dtype == "bool") return 1;
  USER_ERROR() << "unknown dtype '" << dtype << "' in the model plan";
}

Json Plan::to_json() const {
  Json j;
  j["model"] = model;
  j["target"] = target;
  if (!cpu_features.empty()) j["cpu_features"] = cpu_features;
  j["arena_bytes"] = arena_bytes;
  j["unplanned_bytes"] = unplanned_bytes;
  j["inputs"] = inputs;
  j["outputs"] = outputs;
  Json bufs = Json::array();
  for (const auto& b : buffers)
    bufs.push_back({{"name", b.name},
                    {"shape", b.shape},
                    {"dtype", b.dtype},
                    {"bytes", b.bytes},
                    {"storage", storage_name(b.storage)},
                    {"offset", b.offset}});
  j["buffers"] = std::move(bufs);
  Json steps_j = Json::array();
  for (const auto& s : steps)
    steps_j.push_back({{"kernel", s.kernel}, {"args", s.args}, {"label", s.label}, {"task", s.task}});
  j["steps"] = std::move(steps_j);
  if (!index_checks.empty()) {
    Json checks = Json::array();
    for (const auto& c : index_checks)
      checks.push_back({{"input", c.input}, {"limits", c.limits}, {"op", c.op}});
    j["index_checks"] = std::move(checks);
  }
  return j;
}

Plan Plan::from_json(const Json& j) {
  try {
    Plan p;
    p.model = j.at("model").get<std::string>();
    p.target = j.at("target").get<std::string>();
    p.cpu_features = j.value("cpu_features", std::vector<std::string>{});
    p.arena_bytes = j.at("arena_bytes").get<int64_t>();
    p.unplanned_bytes = j.value("unplanned_bytes", int64_t(0));
    p.inputs = j.at("inputs").get<std::vector<int>>();
    p.outputs = j.at("outputs").get<std::vector<int>>();
    for (const auto& b : j.at("buffers")) {
      BufferDesc d;
      d.name = b.at("name").get<std::string>();
      d.shape = b.at("shape").get<std::vector<int64_t>>();
      d.dtype = b.at("dtype").get<std::string>();
      d.bytes = b.at("bytes").get<int64_t>();
      d.storage = parse_storage(b.at("storage").get<std::string>());
      d.offset = b.at("offset").get<int64_t>();
      int64_t n = 1;
      for (int64_t s : d.shape) {
        USER_CHECK(s >= 0 && !__builtin_mul_overflow(n, s, &n)) << "bad shape in the model plan";
      }
      USER_CHECK(d.bytes == n * dtype_bytes(d.dtype) && d.offset >= 0)
          << "buffer '" << d.name << "' has an inconsistent size in the model plan";
      p.buffers.push_back(std::move(d));
    }
    for (const auto& s : j.at("steps")) {
      Step st;
      st.kernel = s.at("kernel").get<std::string>();
      st.args = s.at("args").get<std::vector<int>>();
      st.label = s.value("label", "");
      st.task = s.value("task", -1);
      p.steps.push_back(std::move(st));
    }
    auto check_id = [&](int id) {
      USER_CHECK(id >= 0 && size_t(id) < p.buffers.size()) << "bad buffer id in the model plan";
    };
    for (int id : p.inputs) check_id(id);
    for (int id : p.outputs) check_id(id);
    for (const auto& s : p.steps)
      for (int id : s.args) check_id(id);
    // What the executor relies on beyond ids (a hand-edited plan with a valid checksum crashed
    // it): inputs and outputs are buffers of their kind, a copy is of two equal buffers.
    for (int id : p.inputs)
      USER_CHECK(p.buffers[size_t(id)].storage == Storage::Input) << "an input of the model plan is not an input buffer";
    for (int id : p.outputs)
      USER_CHECK(p.buffers[size_t(id)].storage == Storage::Output) << "an output of the model plan is not an output buffer";
    for (const auto& s : p.steps)
      if (s.kernel == "@copy")
        USER_CHECK(s.args.size() == 2 && p.buffers[size_t(s.args[0])].bytes == p.buffers[size_t(s.args[1])].bytes)
            << "a copy step of the model plan does not copy one buffer into another of its size";
    for (const auto& c : j.value("index_checks", Json::array())) {
      IndexCheck ic;
      ic.input = c.at("input").get<int>();
      ic.limits = c.at("limits").get<std::vector<int64_t>>();
      ic.op = c.at("op").get<std::string>();
      USER_CHECK(ic.input >= 0 && size_t(ic.input) < p.inputs.size() && !ic.limits.empty())
          << "bad index check in the model plan";
      const BufferDesc& b = p.buffers[size_t(p.inputs[size_t(ic.input)])];
      int64_t n = b.bytes / dtype_bytes(b.dtype);
      USER_CHECK((b.dtype == "int64" || b.dtype == "int32") &&
                 n % int64_t(ic.limits.size()) == 0)
          << "bad index check in the model plan";
      for (int64_t l : ic.limits) USER_CHECK(l > 0) << "bad index check in the model plan";
      p.index_checks.push_back(std::move(ic));
    }
    return p;
  } catch (const Json::exception& e) {
    USER_ERROR() << "the model plan is malformed: " << e.what();
  }
}

void Artifact::save(const std::string& path) const {
  write_file_atomically(path, [&](std::ostream& out) {
    out.write(kMagic, sizeof kMagic);
    out.write(reinterpret_cast<const char*>(&kVersion), sizeof kVersion);
    auto section = [&](const std::string& s) {
      uint64_t n = s.size();
      out.write(reinterpret_cast<const char*>(&n), sizeof n);
      out.write(s.data(), std::streamsize(n));
    };
    std::string plan_text = plan.to_json().dump();
    section(plan_text);
    section(shared_object);
    section(weights);
    uint64_t sum = sections_checksum(plan_text, shared_object, weights);
    out.write(reinterpret_cast<const char*>(&sum), sizeof sum);
  });
}

Artifact Artifact::load(const std::string& path) {
  std::error_code ec;
  USER_CHECK(!std::filesystem::is_directory(path, ec))
      << path << ": a directory, not a model artifact";
  // Not a FIFO (opening it waited for a writer for ever) nor a pipe or device: it is read
  // with seeks.
  USER_CHECK(!std::filesystem::exists(path, ec) || std::filesystem::is_regular_file(path, ec))
      << path << ": not a regular file (a model artifact is a file `tuner compile` wrote)";
  std::ifstream in(path, std::ios::binary);
  USER_CHECK(in) << path << ": cannot open the model artifact";
  in.seekg(0, std::ios::end);
  uint64_t size = uint64_t(in.tellg());
  in.seekg(0);
  char magic[sizeof kMagic] = {};
  uint32_t version = 0;
  in.read(magic, sizeof magic);
  in.read(reinterpret_cast<char*>(&version), sizeof version);
  USER_CHECK(in && std::memcmp(magic, kMagic, sizeof kMagic) == 0)
      << path << ": not a Tuner model artifact (compile one with `tuner compile`)";
  USER_CHECK(version != 1) << path
                           << ": artifact format version 1 (written by an older Tuner, without a "
                              "checksum); compile the model again";
  USER_CHECK(version == kVersion) << path << ": artifact format version " << version
                                  << ", this Tuner reads version " << kVersion;
  uint64_t pos = sizeof kMagic + sizeof version;
  auto section = [&](const char* what) {
    uint64_t n = 0;
    in.read(reinterpret_cast<char*>(&n), sizeof n);
    pos += sizeof n;
    USER_CHECK(in && n <= size - pos) << path << ": truncated artifact (" << what << ")";
    std::string s(size_t(n), '\0');
    in.read(s.data(), std::streamsize(n));
    pos += n;
    USER_CHECK(in || n == 0) << path << ": truncated artifact (" << what << ")";
    return s;
  };
  Artifact a;
  std::string plan_text = section("plan");
  a.shared_object = section("kernels");
  a.weights = section("weights");
  uint64_t sum = 0;
  in.read(reinterpret_cast<char*>(&sum), sizeof sum);
  USER_CHECK(in) << path << ": truncated artifact (checksum)";
  USER_CHECK(pos + sizeof sum == size) << path << ": " << size - pos - sizeof sum
                                       << " unexpected bytes after the artifact's end";
  USER_CHECK(sum == sections_checksum(plan_text, a.shared_object, a.weights))
      << path << ": the artifact is corrupt (its checksum does not match); compile it again";
  Json j = parse_json(plan_text, false);
  USER_CHECK(!j.is_discarded()) << path << ": the model plan is not valid JSON";
  try {
    a.plan = Plan::from_json(j);
  } catch (const Json::exception& e) {
    USER_ERROR() << path << ": the model plan is malformed (" << e.what() << ")";
  }
  for (const auto& b : a.plan.buffers) {
    if (b.storage != Storage::Weight) continue;
    USER_CHECK(uint64_t(b.offset) + uint64_t(b.bytes) <= a.weights.size())
        << path << ": weight '" << b.name << "' lies outside the weights section";
  }
  return a;
}

}  // namespace tuner::runtime
