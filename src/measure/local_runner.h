// LocalRunner: the Runner of local tuning. It turns a task's DAG into data once (random
// inputs from the seed, the untransformed schedule built at -O1 as the reference kernel) and
// measures in the sandbox (SandboxRunner, sandbox_runner.h): every candidate in a child
// process, never in the tuner's own process.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "measure/runner.h"
#include "measure/sandbox_runner.h"

namespace tuner::measure {

class LocalRunner : public Runner {
 public:
  explicit LocalRunner(LocalRunnerOptions opts = {});
  ~LocalRunner() override = default;
  LocalRunner(const LocalRunner&) = delete;
  LocalRunner& operator=(const LocalRunner&) = delete;

  /// Prepares the task on first use (random inputs from its seed, reference outputs from the
  /// untransformed schedule run once in the child), then measures the candidates in order.
  /// Throws UserError when the task itself cannot be prepared (target not runnable here,
  /// reference failing) or the child cannot be started; candidate failures are results. An
  /// empty list only prepares the task.
  std::vector<MeasureResult> run(const MeasureTask& task,
                                 const std::vector<BuiltCandidate>& cands) override;
  /// Same as run() for a task given as data.
  std::vector<MeasureResult> run(const TaskData& task, const std::vector<BuiltCandidate>& cands) {
    return sandbox_.run(task, cands);
  }
  /// Changes the per-candidate time limit.
  void set_timeout_s(double s) { sandbox_.set_timeout_s(s); }

  /// The options the runner was made with.
  const LocalRunnerOptions& options() const { return sandbox_.options(); }
  /// How the child is started; its device names where results come from ("local",
  /// "qemu-aarch64"), and `emulated` says the timings are not performance figures.
  const ChildLauncher& launcher() const { return sandbox_.launcher(); }
  /// Children started so far (1 + replacements after crashes and timeouts).
  int children_started() const { return sandbox_.children_started(); }
  /// Pid of the current child, or -1 when none is running.
  int child_pid() const { return sandbox_.child_pid(); }

 private:
  SandboxRunner sandbox_;
  std::shared_ptr<TempDir> dir_;  // reference kernels while they are built and run
  std::mutex mu_;
  uint64_t next_ = 0;
};

}  // namespace tuner::measure
