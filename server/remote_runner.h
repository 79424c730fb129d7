// RemoteRunner: the measure::Runner of server jobs. A round of built candidates becomes work
// items for the dispatcher (each shared object read, size-capped and digested; the task's
// inputs and reference kernel prepared once per task), and run() waits for the workers'
// results. The search sees a Runner like any other.
#pragma once

#include <functional>
#include <list>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "measure/runner.h"
#include "server/dispatcher.h"

namespace tuner::server {

struct RemoteRunnerOptions {
  /// The kernel's time limit on the worker, seconds.
  double kernel_timeout_s = 10;
  /// A round fails when no worker of the target is alive for this long (at the start or
  /// while waiting for results).
  double wait_for_workers_s = 60;
  /// The server's address, for the message telling how to start a worker.
  std::string server_address = "HOST:PORT";
};

/// Thrown out of run() when the job is cancelled mid-round.
class JobCancelled : public std::runtime_error {
 public:
  JobCancelled() : std::runtime_error("cancelled") {}
};

class RemoteRunner : public measure::Runner {
 public:
  /// `cancelled` is polled while waiting for results.
  RemoteRunner(Dispatcher& dispatcher, std::string job, RemoteRunnerOptions opts,
               std::function<bool()> cancelled = {});

  /// Measures the candidates on workers of task.target; results in candidate order. Throws
  /// UserError when no worker serves the target, JobCancelled when the job is cancelled.
  std::vector<measure::MeasureResult> run(const measure::MeasureTask& task,
                                          const std::vector<measure::BuiltCandidate>& cands) override;

  /// The first of `targets` (in order of preference) that an alive worker serves, waiting up
  /// to wait_for_workers_s for one; UserError naming targets[0] when none does, JobCancelled.
  std::string wait_for_workers(const std::vector<std::string>& targets);

  /// Called with a line when the job starts waiting for a worker, and with "" when one came.
  void on_waiting(std::function<void(const std::string&)> f) { waiting_ = std::move(f); }

 private:
  std::shared_ptr<const rpc::TaskPayload> payload(const measure::MeasureTask& task);

  Dispatcher& dispatcher_;
  std::string job_;
  RemoteRunnerOptions opts_;
  std::function<bool()> cancelled_;
  std::function<void(const std::string&)> waiting_;
  // Payloads by task key, the most recently used last: a model's tune alternates between
  // its tasks, and a payload costs a reference build (CUDA: also a sandboxed reference run).
  std::list<std::pair<std::string, std::shared_ptr<const rpc::TaskPayload>>> tasks_;
};

}  // namespace tuner::server
