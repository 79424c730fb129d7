// SandboxRunner: measures every candidate in a child process (tuner-measure-child), never in
// the calling process. One persistent child serves many requests, so a trial does not pay
// process start-up; a child that crashed, overran its time or hit its memory limit is killed
// (if needed), reaped and replaced on the next request; so is a child after any failed
// candidate (a wrong answer may come from a kernel writing out of bounds). Candidates run one
// at a time, so they do not disturb each other's timings.
//
// It takes a task as data (inputs, output types, a built reference kernel) and needs no
// compiler: tuner-worker links it without LLVM. LocalRunner (local_runner.h) adds the step
// from a DAG to that data.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "measure/artifact.h"
#include "measure/child_launcher.h"
#include "measure/child_process.h"
#include "measure/built_candidate.h"
#include "measure/measure_result.h"
#include "ops/host_tensor.h"
#include "support/json.h"

namespace tuner::measure {

/// This host cannot measure the task at all (its reference outputs do not fit the child's
/// memory limit or time): a HostError of the task, not of every task (a tuner-worker reports
/// it for its job and goes on serving others).
class TaskError : public HostError {
 public:
  using HostError::HostError;
};

struct LocalRunnerOptions {
  /// Threads of the kernel's thread pool in the child.
  int threads = 2;
  /// Timed repeats; each reports one time (the median of them is the cost).
  int repeats = 3;
  /// A repeat calls the kernel enough times to last at least this long.
  double min_repeat_ms = 20;
  /// Untimed calls after the correctness check: at least this many, and for at least a
  /// quarter of min_repeat_ms (they also size the repeats). 0: none.
  int warmup = 1;
  /// Wall-clock limit per candidate (load, check, warm-up and repeats), seconds -> RUN_TIMEOUT.
  double timeout_s = 10;
  /// Address-space limit of the child (RLIMIT_AS), MiB -> RUNTIME_DEVICE "out of memory".
  int64_t memory_limit_mb = 4096;
  /// Flush the argument buffers from the CPU caches before every repeat (clflush).
  bool flush_cache = true;
  /// Flush them before every call instead, timing calls one by one (at most 10 per repeat):
  /// a kernel in a model finds its weights and inputs out of its core's cache.
  bool cold_calls = false;
  /// Tolerances of the check against the reference outputs (integers are compared exactly).
  double rtol = 1e-3;
  double atol = 2e-3;
  /// A candidate whose first (checked) call is this many times slower than the best time
  /// measured so far for the task (and longer than min_repeat_ms) is not timed further: it
  /// gets that one time (its ranking needs no precision), and a request is killed once it
  /// could not be within this factor (RUN_TIMEOUT well before timeout_s). Hopeless candidates
  /// then cost about one call, not seconds of repeats. 0 disables it; until a task has a best
  /// time, every candidate is fully timed.
  double give_up_factor = 10;
  /// Wall-clock limit of the one run of the naive reference per task, seconds.
  double reference_timeout_s = 600;
  /// Prepared tasks kept (inputs and expected outputs on disk); the oldest is dropped.
  size_t max_cached_tasks = 4;
  /// The CUDA device (ordinal) that measures CUDA candidates.
  int cuda_device = 0;
  /// The child executable; empty: locate_measure_child(). Ignored when launcher is set.
  std::string child_path;
  /// How the child is started (an emulated child for another architecture, see
  /// child_launcher.h); empty command: the native child at child_path.
  ChildLauncher launcher;
};

/// Fails with a UserError naming the first option out of its range (threads, repeats, ...).
void check_runner_options(const LocalRunnerOptions& o);

/// A task given as data instead of a DAG (what a remote worker receives): the inputs, the
/// outputs' types and shapes, and a built reference kernel that computes the expected outputs
/// (the untransformed schedule). The worker needs no compiler.
struct TaskData {
  /// Identity of the prepared data (MeasureTask::key() on the server).
  std::string key;
  std::vector<ops::HostTensor> inputs;
  struct Output {
    te::DataType dtype;
    std::vector<int64_t> shape;
  };
  std::vector<Output> outputs;
  /// Expected outputs given by the caller (e.g. the op's reference computed on the host);
  /// when empty, the reference kernel computes them in the child.
  std::vector<ops::HostTensor> expected;
  /// The reference kernel (a shared object exporting `reference_symbol`).
  std::string reference_so;
  std::string reference_symbol = "reference";
};

class SandboxRunner {
 public:
  explicit SandboxRunner(LocalRunnerOptions opts = {});
  /// Kills and reaps the child and removes the runner's temporary files.
  ~SandboxRunner();
  SandboxRunner(const SandboxRunner&) = delete;
  SandboxRunner& operator=(const SandboxRunner&) = delete;

  /// Measures the candidates in order. The task is prepared once per key (inputs written,
  /// the reference kernel run in the child for the expected outputs; the reference file is
  /// only read then). Throws UserError when the task cannot be prepared or the child cannot
  /// be started; candidate failures are results. An empty list only prepares the task.
  std::vector<MeasureResult> run(const TaskData& task, const std::vector<BuiltCandidate>& cands);
  /// The task's expected outputs (prepared as run() prepares it: given, or computed by the
  /// reference kernel in the child). For devices that cannot run the reference themselves.
  std::vector<ops::HostTensor> expected_outputs(const TaskData& task);
  /// True when a task with this key is prepared (its data need not be sent again).
  bool has_task(const std::string& key);

  /// Changes the per-candidate time limit (a remote lease carries its own).
  void set_timeout_s(double s) {
    std::lock_guard lk(mu_);
    opts_.timeout_s = s;
  }

  /// The options the runner was made with.
  const LocalRunnerOptions& options() const { return opts_; }
  /// How the child is started; its device names where results come from ("local",
  /// "qemu-aarch64"), and `emulated` says the timings are not performance figures.
  const ChildLauncher& launcher() const { return launcher_; }
  /// Children started so far (1 + replacements after crashes and timeouts).
  int children_started() const { return children_started_; }
  /// Pid of the current child, or -1 when none is running.
  int child_pid() const { return child_ ? int(child_->pid()) : -1; }

 private:
  struct PreparedTask {
    std::string dir;
    Json spec;  // the "task" object of requests
    uint64_t last_used = 0;
    double best_seconds = std::numeric_limits<double>::infinity();  // best median so far
    double load_seconds = 0.25;  // allowance for a fresh child to load the task and check
    double arg_mb = 0;           // inputs and outputs, MB (what a cache flush goes over)
  };

  PreparedTask& prepare(const TaskData& task);
  // Drops a prepared task whose folder was deleted (a /tmp cleaner): it is prepared again.
  void forget_if_deleted(const std::string& key);
  std::vector<MeasureResult> run_prepared(PreparedTask& pt, const std::vector<BuiltCandidate>& cands);
  MeasureResult measure_one(PreparedTask& pt, const BuiltCandidate& c);
  // Sends a request to the child (starting one if needed) and turns the reply, the child's
  // death or the timeout into a result.
  MeasureResult request(const Json& req, double timeout_s);
  // One attempt of request(); *killed: the child died of a SIGKILL it did not get from us.
  MeasureResult request_once(const Json& req, double timeout_s, bool* killed);
  void ensure_child();

  LocalRunnerOptions opts_;
  ChildLauncher launcher_;
  std::shared_ptr<TempDir> root_;
  std::unique_ptr<ChildProcess> child_;
  std::map<std::string, PreparedTask> tasks_;
  uint64_t use_counter_ = 0;
  int children_started_ = 0;
  std::mutex mu_;  // one measurement at a time
};

}  // namespace tuner::measure
