// tuner-worker: dials out to the server (so it works behind NAT), registers its target,
// heartbeats on a thread, pulls leases and measures each candidate with the sandboxed
// SandboxRunner (child process, time and memory limits, cache flush), then reports. Artifacts
// come built from the server; their SHA-256 is checked before anything is loaded. A server
// that is down is retried with exponential backoff; a server that forgot the worker (restart,
// declared lost) gets a new registration.
//
// A target of another architecture than this machine's (aarch64 on x86) is measured by the
// emulated child (child_launcher.h: the aarch64 child under qemu-aarch64): the worker is then an
// emulated board, registers as such, and its records stay apart from real boards'.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "measure/sandbox_runner.h"
#include "tuner.grpc.pb.h"

namespace tuner::worker {

struct WorkerOptions {
  std::string server;  // HOST:PORT
  std::string target = "llvm";
  std::string token;
  std::string device_key;  // default: the host name
  /// Leases measured at once (1 for clean timing: candidates never share the machine).
  int max_parallel = 1;
  /// CA certificate (PEM) of a TLS server; empty: plaintext.
  std::string tls_ca;
  /// Backoff between attempts to reach the server: starts here, doubles, stops growing at max.
  double initial_backoff_s = 0.2;
  double max_backoff_s = 30;
  /// Long-poll wait of one PullWork call.
  double pull_wait_s = 2;
  measure::LocalRunnerOptions runner;
};

class Worker {
 public:
  /// Checks the options and picks the measurement child: native, or emulated for a target of
  /// another architecture (UserError naming what is missing, e.g. qemu-aarch64); connects
  /// lazily.
  explicit Worker(WorkerOptions opts);
  ~Worker();

  /// Serves until stop() (or a fatal refusal: bad token -> UserError). Deregisters at the end.
  void run();
  /// Asks run() to return (safe from a signal-watching thread).
  void stop() { stop_ = true; }
  /// Measurements reported and accepted so far.
  int64_t reported() const { return reported_; }
  /// True when the target's kernels run under an emulator here (timings are not figures).
  bool emulated() const { return opts_.runner.launcher.emulated; }

 private:
  struct Registration {
    std::string id;
    double heartbeat_s = 1;
  };
  // One measuring slot: pull_loop(), an error in it ending the worker (fatal_).
  void slot_loop(int slot);
  void pull_loop();
  void heartbeat_loop();
  // The current worker id, registering (with backoff) when there is none; empty when stopping.
  std::string worker_id();
  void forget(const std::string& id);
  void backoff(double* delay);
  void fatal_if_refused(const grpc::Status& s);
  void measure(const std::string& id, measure::SandboxRunner& runner, const rpc::Lease& lease);
  // Writes one of the worker's files in its folder (made again if deleted); HostError if it
  // cannot (a full disk), which stops the worker.
  std::string write_file(const std::string& name, const std::string& bytes);
  std::shared_ptr<const measure::TaskData> task_of(const rpc::Lease& lease, std::string* error);
  std::unique_ptr<grpc::ClientContext> context(double timeout_s);

  WorkerOptions opts_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<rpc::WorkerService::Stub> stub_;
  std::shared_ptr<measure::TempDir> dir_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> reported_{0};
  std::mutex mu_;
  // One slot registers at a time: the others then find its id (--max-parallel 4 registered 4
  // workers, 3 of them left to be declared lost).
  std::mutex register_mu_;
  Registration reg_;
  std::string fatal_;  // a refusal or a slot's error that ends run()
  std::map<std::string, std::shared_ptr<const measure::TaskData>> tasks_;  // by key
  uint64_t next_file_ = 0;
};

}  // namespace tuner::worker
