// Helpers shared by the tests of src/db: temporary directories, synthetic workloads and
// records, file snapshots, and forked child processes.
#pragma once

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <set>
#include <sstream>
#include <string>

#include "db/record.h"
#include "db/workload.h"

namespace tuner::db::test {

namespace fs = std::filesystem;

/// A fresh directory under the system temp dir, removed with its contents at scope exit.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "tuner_db_test_XXXXXX").string();
    char* p = mkdtemp(tmpl.data());
    if (!p) throw std::runtime_error("mkdtemp failed");
    path_ = p;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

/// A synthetic workload number `i` (a consistent hash of a made-up canonical text).
inline Workload test_workload(int i) {
  Workload w;
  w.canonical = fmt::format(
      "A = placeholder([{0}, 64], float32)\nB = placeholder([64, {0}], float32)\n"
      "C[i, j] = sum(A[i, k] * B[k, j], k in [0, 64])\noutputs: C",
      16 * (i + 1));
  w.hash = workload_hash_of(w.canonical);
  w.op = "matmul";
  w.params = fmt::format("M={0} N={0} K=64", 16 * (i + 1));
  w.shapes = Json::parse(fmt::format(R"([{{"name":"A","shape":[{0},64],"dtype":"float32"}},)"
                                     R"({{"name":"B","shape":[64,{0}],"dtype":"float32"}},)"
                                     R"({{"name":"C","shape":[{0},{0}],"dtype":"float32"}}])",
                                     16 * (i + 1)));
  w.flops = 2.0 * 64 * (16 * (i + 1)) * (16 * (i + 1));
  return w;
}

inline constexpr const char* kX86 = "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=znver5";
inline constexpr const char* kArm = "llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-v2";

/// An ok record of `workload_id` on `target` whose repeats are around `seconds`; `tag` makes
/// the trace (and so the record) distinct.
inline Record test_record(int64_t workload_id, const std::string& target, double seconds, int tag,
                          const std::string& worker = "local") {
  Record r;
  r.workload_id = workload_id;
  r.target = target;
  r.trace =
      fmt::format(R"({{"version": 1, "insts": [{{"kind": "SamplePerfectTile", "stage": "C", )"
                  R"("args": [0, 4, 64], "decision": [{}, 2, 4, 8]}}], "probs": [0.25, 0.75]}})",
                  tag);
  r.trace_version = 1;
  r.status = MeasureStatus::Ok;
  r.times = {seconds * 1.02, seconds, seconds * 0.99};
  r.build_seconds = 0.25;
  r.run_seconds = 0.01;
  r.worker = worker;
  r.tuner_version = "0.1.0";
  r.feature_version = 1;
  return r;
}

/// An error record (no times).
inline Record test_error(int64_t workload_id, const std::string& target, MeasureStatus s, int tag) {
  Record r = test_record(workload_id, target, 1, tag);
  r.status = s;
  r.times.clear();
  r.error = fmt::format("{} in candidate {}", status_name(s), tag);
  return r;
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

/// The names in a directory.
inline std::set<std::string> listing(const fs::path& dir) {
  std::set<std::string> out;
  for (auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

/// Runs `body` in a forked child process; returns its pid. The child exits with body's
/// return value, or 99 (after printing the message) when body throws.
inline pid_t spawn(const std::function<int()>& body) {
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid != 0) return pid;
  int code = 98;
  try {
    code = body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "child %d: %s\n", int(getpid()), e.what());
    code = 99;
  }
  std::fflush(nullptr);
  _exit(code);
}

/// Waits for `pid`; returns its exit code, or 128 + signal number.
inline int wait_exit(pid_t pid) {
  int st = 0;
  if (waitpid(pid, &st, 0) != pid) return -1;
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
  return -1;
}

}  // namespace tuner::db::test
