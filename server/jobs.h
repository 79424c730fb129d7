// Tuning jobs of the server: each job is a tuning run in the database (what = "job ...", args =
// the submitted spec), run on its own thread by search::tune_tasks with a RemoteRunner, so it
// is exactly the local search. A restarted server resumes every job whose run is still
// "running"; the trials it already committed count as spent. A job for a target that only
// emulated workers serve measures under the target's emulated identity (`-emulator=qemu`).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "db/sqlite_database.h"
#include "server/dispatcher.h"
#include "server/remote_runner.h"
#include "tuner.pb.h"

namespace tuner::server {

struct JobOptions {
  /// Where submitted models are kept (so a restarted server can resume their jobs).
  std::string jobs_dir;
  /// Jobs not yet finished at once; more is refused (RESOURCE_EXHAUSTED).
  int max_active_jobs = 8;
  /// Parallel builds per job (0: the machine's cores).
  int builder_threads = 0;
  /// Largest accepted model file.
  size_t max_model_bytes = 200u << 20;
  RemoteRunnerOptions runner;
};

/// Thrown by submit when max_active_jobs are running.
class TooManyJobs : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class JobManager {
 public:
  JobManager(db::SqliteDatabase& db, Dispatcher& dispatcher, JobOptions opts);
  /// Stops every job between rounds (their runs stay "running", to be resumed) and joins.
  ~JobManager();

  /// Validates and starts a job; returns its id. UserError for a bad request.
  std::string submit(const rpc::SubmitRequest& req);
  /// The address workers dial, for messages (set once the port is bound).
  void set_server_address(const std::string& a) { opts_.runner.server_address = a; }
  /// Restarts the jobs whose runs the database still has as running; returns how many.
  int resume_all();
  /// Asks the job to stop; false when there is no such job.
  bool cancel(const std::string& job);
  /// The job's state; nullopt when unknown.
  std::optional<rpc::JobInfo> info(const std::string& job);
  /// Waits until the job's state changes past `*version` (or timeout_s passes); updates it
  /// and returns whether it changed.
  bool wait_change(const std::string& job, uint64_t* version, double timeout_s);
  /// Every job of this server run, oldest first.
  std::vector<rpc::JobInfo> list();

 private:
  struct Job {
    rpc::SubmitRequest spec;
    int64_t run_id = 0;
    // The target identity measured: spec.target, or its emulated twin when only emulated
    // workers serve it; chosen at the job's start (empty until then), kept in the run.
    std::string target;
    rpc::JobInfo info;
    uint64_t version = 0;
    std::atomic<bool> cancel{false};
    std::thread thread;
  };
  void start(std::shared_ptr<Job> job);
  void run(Job& job);
  // Records the job's end in its run (with the trials spent and any error) and shows it.
  void end(Job& job, db::RunState state, const std::string& error);
  void update(Job& job, const std::function<void(rpc::JobInfo&)>& f);

  db::SqliteDatabase& db_;
  Dispatcher& dispatcher_;
  JobOptions opts_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<int64_t, std::shared_ptr<Job>> jobs_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> next_incoming_{0};  // names of models being validated
};

}  // namespace tuner::server
