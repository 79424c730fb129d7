// The Builder: a batch of (DAG, trace, target) candidates -> shared objects in a private
// temporary directory, built in parallel, each within a time limit, identical lowered
// programs built once.
//
// Timeout mechanism: builds run on threads of a WatchdogPool; one that overruns is marked
// BUILD_TIMEOUT and abandoned (left to finish in the background, its output discarded).
// Why not a child process per build: forking the multi-threaded tuner and running LLVM in the
// fork is unsafe (locks held by other threads at fork time), and spawning a fresh builder
// executable would need a serialized form of the DAG and trace that does not exist yet. The
// cost of abandoning: a slow build keeps a core busy until it ends; an LLVM fatal error (which
// calls exit) would still take the process down. Builds always terminate, so this is a
// time limit on the search's waiting, not on the work.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "codegen/build.h"
#include "codegen/target.h"
#include "db/measure_status.h"
#include "measure/artifact.h"
#include "measure/built_candidate.h"
#include "measure/watchdog_pool.h"
#include "schedule/lower.h"
#include "schedule/trace.h"
#include "te/compute_dag.h"

namespace tuner::measure {

/// One candidate to build.
struct BuildInput {
  te::ComputeDAG dag;
  schedule::Trace trace;
  codegen::Target target;
};

struct BuilderOptions {
  /// Parallel builds; 0 = the machine's cores.
  int threads = 0;
  /// Wall-clock limit per candidate (lowering + codegen + link), seconds -> BUILD_TIMEOUT.
  double timeout_s = 15;
  /// Symbol name of every built kernel (one kernel per shared object).
  std::string kernel_name = "kernel";
  schedule::LowerOptions lower;
  codegen::BuildOptions build;  // opt_level 3
};

class Builder {
 public:
  /// A builder with its own private temporary directory.
  explicit Builder(BuilderOptions opts = {});
  /// Waits (bounded) for abandoned builds; built files stay until their candidates are gone.
  ~Builder() = default;

  /// Builds a batch; results are in batch order. Errors are results, never exceptions:
  /// ScheduleError -> INSTANTIATION, lowering/codegen/link errors -> COMPILE_HOST, a CUDA
  /// target -> COMPILE_DEVICE (not built locally yet), too slow -> BUILD_TIMEOUT.
  /// Candidates whose build has not started when `stop` returns true are not built (status
  /// UNKNOWN, "not built: the run was stopped").
  std::vector<BuiltCandidate> build(const std::vector<BuildInput>& batch,
                                    const std::function<bool()>& stop = {});
  /// Builds traces of one workload for one target.
  std::vector<BuiltCandidate> build(const te::ComputeDAG& dag,
                                    const std::vector<schedule::Trace>& traces,
                                    const codegen::Target& target,
                                    const std::function<bool()>& stop = {});

  /// The options the builder was made with.
  const BuilderOptions& options() const { return opts_; }
  /// Timed-out builds still running in the background.
  int abandoned_running() const { return pool_.abandoned_running(); }
  /// The private directory holding the built files.
  const std::string& dir() const { return dir_->path(); }

 private:
  BuilderOptions opts_;
  std::shared_ptr<TempDir> dir_;
  WatchdogPool pool_;
  std::atomic<uint64_t> next_file_{0};
};

}  // namespace tuner::measure
