// Helpers of the measure tests: workloads, fixture kernels, counting child processes.
#pragma once

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "codegen/target.h"
#include "measure/builder.h"
#include "measure/measure_task.h"
#include "ops/registry.h"
#include "te/compute_dag.h"
#include "te/tensor.h"
#include "unit/measure/fixtures/fixture.h"

namespace tuner::measure::test {

/// c = a + b over fixture::kN floats: the workload the hand-written fixture kernels implement.
inline te::ComputeDAG add_dag() {
  int64_t n = tuner_fixture::kN;
  auto a = te::placeholder({n}, te::DataType::f32(), "a");
  auto b = te::placeholder({n}, te::DataType::f32(), "b");
  auto c = te::compute(
      {n},
      [&](const std::vector<te::Var>& i) {
        return a(std::vector<te::Expr>{i[0]}) + b(std::vector<te::Expr>{i[0]});
      },
      "c");
  return te::ComputeDAG({a, b}, {c});
}

/// matmul m x n x k from the op registry.
inline te::ComputeDAG matmul_dag(int64_t m, int64_t n, int64_t k) {
  const auto& op = ops::find_op("matmul");
  return op.build(ops::parse_params(op, {"m=" + std::to_string(m), "n=" + std::to_string(n),
                                         "k=" + std::to_string(k)}));
}

inline const codegen::Target& host() {
  static codegen::Target t = codegen::Target::parse("llvm");
  return t;
}

inline MeasureTask task_of(te::ComputeDAG dag, uint64_t seed = 1) {
  MeasureTask t;
  t.dag = std::move(dag);
  t.target = host();
  t.input_seed = seed;
  return t;
}

/// A hand-written fixture kernel (tests/unit/measure/fixtures/<name>.cc) as a built candidate.
inline BuiltCandidate fixture(const std::string& name) {
  return BuiltCandidate::from_file(std::string(TUNER_MEASURE_FIXTURE_DIR) + "/" + name + ".so",
                                   "kernel");
}

/// Pids of the live or zombie children of this process (from /proc).
inline std::vector<int> child_pids() {
  std::vector<int> pids;
  DIR* d = opendir("/proc");
  if (!d) return pids;
  int self = int(getpid());
  while (dirent* e = readdir(d)) {
    int pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    std::ifstream in("/proc/" + std::string(e->d_name) + "/stat");
    std::string stat;
    std::getline(in, stat);
    // pid (comm) state ppid ...: comm may contain spaces, so parse after the last ')'.
    auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    char state = 0;
    int ppid = 0;
    if (std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) == 2 && ppid == self)
      pids.push_back(pid);
  }
  closedir(d);
  return pids;
}

}  // namespace tuner::measure::test
