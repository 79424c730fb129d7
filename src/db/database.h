// The tuning database as the search, the compiler, the CLI and the server see it. Two
// implementations: SqliteDatabase (the real one, sqlite_database.h) and MemoryDatabase (for
// tests of the search, memory_database.h). Every query is target-aware: a record measured on
// one target is never returned for another.
//
// Implementations are safe to call from several threads. Errors in the caller's data are
// UserErrors; a database that cannot be read or written is a UserError naming the file.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "db/record.h"
#include "db/workload.h"
#include "support/json.h"

namespace tuner::db {

/// The state of a tuning run.
enum class RunState : unsigned char { Running, Finished, Failed, Interrupted };
const char* run_state_name(RunState s);  // "running", "finished", "failed", "interrupted"
std::optional<RunState> parse_run_state(std::string_view s);

/// One invocation of the tuner (`tuner tune ...`), kept so that an interrupted run can resume.
struct TuningRun {
  int64_t id = 0;
  std::string what;            // what is tuned: a model path, a workload hash, ...
  Json args = Json::object();  // the run's options (target, trials, seed, ...)
  RunState state = RunState::Running;
  Json progress = Json::object();  // the tuner's state of the run (trials, tasks, ...): resume, reports
  int64_t started_ms = 0;
  std::optional<int64_t> finished_ms;  // set when the state leaves Running
};

/// A trained cost model of one target and feature version.
struct CostModelBlob {
  std::string target;
  int feature_version = 0;
  std::string kind;         // "xgboost", ...
  std::string blob;         // the serialized model (binary)
  int64_t num_records = 0;  // how many records it was trained on
  int64_t created_ms = 0;   // set by the database
};

/// What commit_round did.
struct CommitResult {
  std::vector<int64_t> ids;  // one per committed record, in order (the existing id when the
                             //   same record was already present)
  int64_t inserted = 0;      // how many were new
};

/// A (workload, target) pair that has records, for listings.
struct WorkloadSummary {
  int64_t workload_id = 0;
  std::string target;
  int64_t records = 0;  // all records of the pair
  int64_t ok_records = 0;
  /// The smallest median of an ok record measured alone (not timed inside a model), seconds.
  std::optional<double> best_median;
};

/// Counts for `tuner db stats`; every list sorted by name.
struct DbStats {
  int64_t workloads = 0, targets = 0, records = 0, tuning_runs = 0, cost_models = 0;
  std::vector<std::pair<std::string, int64_t>> by_status, by_target, by_worker;
};

class Database {
 public:
  virtual ~Database() = default;

  // ---- workloads and targets
  /// Stores `w` unless a workload with its hash exists; returns the id either way. Throws a
  /// UserError when `w` is malformed (check_workload) or its hash is taken by a different DAG.
  virtual int64_t commit_workload(const Workload& w) = 0;
  virtual std::optional<Workload> workload(int64_t id) = 0;
  virtual std::optional<Workload> find_workload(std::string_view hash) = 0;
  /// All workloads, ordered by hash.
  virtual std::vector<Workload> workloads() = 0;
  /// Stores or updates a target's hardware parameters; returns its id. (Targets are also
  /// created implicitly by commit_round.)
  virtual int64_t commit_target(const Target& t) = 0;
  /// All targets, ordered by name.
  virtual std::vector<Target> targets() = 0;

  // ---- records
  /// Commits one measurement round in ONE transaction: a reader sees all of it or none of it.
  /// Records already present (same content key) are not added again. Throws a UserError, and
  /// commits nothing, when a record is malformed (check_record) or names an unknown workload.
  virtual CommitResult commit_round(std::span<const Record> round) = 0;
  /// The k fastest ok records of (workload, target) by median, fastest first (ties by id).
  /// Only records measured alone (measured_alone): timings inside a model are another scale.
  virtual std::vector<Record> top_k(int64_t workload_id, std::string_view target, int k) = 0;
  virtual std::optional<Record> record(int64_t id) = 0;
  virtual int64_t count_records(const RecordFilter& filter) = 0;
  /// Every ok record of `target` measured alone with id > after_id, by id (the cost model's
  /// training data; pass the last id seen to get only what is new).
  virtual std::vector<Record> ok_records(std::string_view target, int64_t after_id = 0) = 0;
  /// Calls `visit` for every record matching `filter` with its workload, in the canonical
  /// export order (workload hash, target, created, key), from one consistent snapshot.
  virtual void for_each_record(
      const RecordFilter& filter,
      const std::function<void(const Workload&, const Record&)>& visit) = 0;
  /// One row per (workload, target) with records, ordered by workload hash then target.
  virtual std::vector<WorkloadSummary> summaries() = 0;
  virtual DbStats stats() = 0;
  /// Keeps the `keep` fastest ok tuning records (neither validation nor in-model timing) of
  /// every (workload, target) and the ok records of its latest validation and in-model
  /// timing (compile chooses by them); deletes every other record (error records included);
  /// returns how many were deleted. keep >= 1.
  virtual int64_t prune(int keep) = 0;

  // ---- tuning runs
  virtual int64_t create_run(std::string_view what, const Json& args) = 0;
  /// Sets the state and progress; leaving Running stamps the finish time.
  virtual void update_run(int64_t id, RunState state, const Json& progress) = 0;
  virtual std::optional<TuningRun> run(int64_t id) = 0;
  /// All runs, newest first.
  virtual std::vector<TuningRun> runs() = 0;

  // ---- cost models
  /// Stores the model, replacing the previous one of the same (target, feature version, kind).
  virtual void save_cost_model(const CostModelBlob& m) = 0;
  virtual std::optional<CostModelBlob> load_cost_model(std::string_view target, int feature_version,
                                                       std::string_view kind) = 0;
};

}  // namespace tuner::db
