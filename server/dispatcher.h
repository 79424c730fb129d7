// The server's work queue and worker registry: measurement work items become leases for
// workers of their target; heartbeats keep workers alive; a silent worker's leases and expired
// leases are re-queued; reports are idempotent on (job, candidate, attempt); a candidate
// whose attempts took down `quarantine_after` workers is finished with an error. Independent
// of gRPC (the services translate), so its rules are testable directly.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "measure/built_candidate.h"
#include "measure/measure_result.h"
#include "tuner.pb.h"

namespace tuner::server {

using Clock = std::chrono::steady_clock;

struct DispatcherOptions {
  /// A worker without a heartbeat (or any call) for this long is lost; its leases re-queue.
  double heartbeat_timeout_s = 15;
  /// A lease lasts the kernel's timeout plus this margin from the moment a worker takes it.
  double lease_margin_s = 20;
  /// Added to a lease that also carries its task (the worker first runs the reference).
  double prepare_allowance_s = 60;
  /// Work items pending or leased at once; more is refused (RESOURCE_EXHAUSTED), except
  /// that an empty queue takes any one batch.
  size_t max_queue = 4096;
  /// Artifact bytes held by queued items at once (memory bound; same rule as max_queue).
  size_t max_queue_bytes = size_t(1) << 30;
  /// Workers lost while holding a candidate before it is quarantined.
  int quarantine_after = 3;
  /// How often the reaper looks for lost workers and expired leases.
  double reap_interval_s = 0.1;
};

/// One candidate to measure.
struct Work {
  std::string job;
  std::string target;     // canonical target string
  std::string candidate;  // hex SHA-256 of the artifact
  std::string symbol;
  double timeout_s = 10;  // the kernel's time limit on the worker
  std::shared_ptr<const rpc::TaskPayload> task;
  std::shared_ptr<const std::string> artifact;
  /// A CUDA kernel's launch shape (the artifact is then a cubin).
  std::optional<measure::GpuProgram> gpu;
};

/// Thrown by submit when the queue is full.
class QueueFull : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A worker as listings show it.
struct WorkerView {
  std::string id, target, device_key, hardware, version;
  std::string state;  // alive, lost, gone
  bool emulated = false;  // runs the kernels under an emulator
  double seconds_since_heartbeat = 0;
  int64_t measurements = 0;
  int leases = 0;
};

struct ReportOutcome {
  bool accepted = false;
  std::string reason;         // why not
  bool known_worker = true;  // false: the id is unknown or was declared lost (register again)
};

class Dispatcher {
 public:
  explicit Dispatcher(DispatcherOptions opts = {});
  /// Stops the reaper; pending futures get an UNKNOWN "server shutting down" result.
  ~Dispatcher();
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  /// Queues the batch (all or nothing; QueueFull when it does not fit). The same (job,
  /// candidate) already queued shares its result.
  std::vector<std::shared_future<measure::MeasureResult>> submit(std::vector<Work> batch);
  /// Finishes every unfinished item of the job with an UNKNOWN "cancelled" result.
  void cancel_job(const std::string& job);

  /// A new worker id. An emulated worker registers under its target's emulated identity
  /// (`... -emulator=qemu`), so it gets only work of that identity.
  std::string register_worker(const std::string& target, const std::string& device_key,
                              const std::string& hardware, const std::string& version,
                              bool emulated = false);
  /// Marks the worker alive; false when the id is unknown or was declared lost (register again).
  bool heartbeat(const std::string& worker_id);
  /// Up to max leases for the worker's target, waiting up to wait_s for the first; nullopt
  /// when the worker is unknown or lost.
  std::optional<std::vector<rpc::Lease>> pull(const std::string& worker_id, int max, double wait_s);
  /// Delivers a result; a duplicate, late or foreign report is refused and changes nothing,
  /// as is any report of an unknown or lost worker (known_worker false: register again).
  /// With task_missing the candidate is re-queued (no result) and the worker gets the task's
  /// data again; when the lease carried the data already, that is a strike on the candidate
  /// (a worker that always answers so cannot keep a job running for ever).
  /// With task_error the worker cannot measure the task at all: every item of the job is
  /// finished and take_job_error gives the job that message (its results are not records).
  ReportOutcome report(const std::string& worker_id, const std::string& job,
                       const std::string& candidate, int attempt, measure::MeasureResult r,
                       bool task_missing = false, const std::string& task_error = "");
  /// The task_error a worker reported for the job, once; nullopt when none did.
  std::optional<std::string> take_job_error(const std::string& job);
  /// The worker leaves; its leases re-queue without counting against the candidates. False
  /// when the id is unknown or was declared lost (its leases were re-queued then).
  bool deregister(const std::string& worker_id);

  /// Alive workers serving the target.
  int alive_workers(const std::string& target);
  /// Every worker known since start (lost and gone ones included).
  std::vector<WorkerView> workers();
  /// Items pending or leased.
  size_t queued();
  const DispatcherOptions& options() const { return opts_; }

 private:
  struct Item {
    uint64_t id = 0;
    Work work;
    int attempt = 0;  // of the current (or last) lease
    int strikes = 0;  // workers lost (or misbehaving) while it was leased
    bool lease_has_task = false;  // the current lease carried the task's data
    std::string leased_to;
    Clock::time_point leased_at;
    Clock::time_point deadline;
    std::promise<measure::MeasureResult> promise;
    std::shared_future<measure::MeasureResult> future;
  };
  struct Worker {
    WorkerView view;
    Clock::time_point last_seen;
    std::set<uint64_t> leases;
    std::set<std::string> tasks_sent;
    bool alive = true;
  };

  // The worker of `id`; nullptr when the id is unknown or was declared lost. Under mu_.
  Worker* live_worker(const std::string& id);
  void reap_loop();
  // Takes the item back from its worker: re-queued, or quarantined after too many strikes.
  void revoke(Item& it, bool strike, const std::string& why);
  void finish(uint64_t id, measure::MeasureResult r);
  // Finishes every item of the job with `r`. Under mu_.
  void finish_job(const std::string& job, const measure::MeasureResult& r);

  DispatcherOptions opts_;
  std::mutex mu_;
  std::condition_variable work_cv_;
  std::map<uint64_t, Item> items_;
  std::map<std::string, std::string> job_errors_;  // by job: a worker's task_error
  std::map<std::pair<std::string, std::string>, uint64_t> by_key_;  // (job, candidate)
  std::deque<uint64_t> pending_;
  std::map<std::string, Worker> workers_;
  uint64_t next_item_ = 1, next_worker_ = 1;
  size_t queued_bytes_ = 0;
  bool stopping_ = false;
  std::condition_variable stop_cv_;
  std::thread reaper_;
};

}  // namespace tuner::server
