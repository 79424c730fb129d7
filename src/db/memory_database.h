// An in-memory Database for tests of the search and the tools: the same semantics as
// SqliteDatabase (content-key deduplication, target-aware queries, export order), nothing on
// disk. Thread-safe.
#pragma once

#include <map>
#include <mutex>

#include "db/database.h"

namespace tuner::db {

class MemoryDatabase final : public Database {
 public:
  int64_t commit_workload(const Workload& w) override;
  std::optional<Workload> workload(int64_t id) override;
  std::optional<Workload> find_workload(std::string_view hash) override;
  std::vector<Workload> workloads() override;
  int64_t commit_target(const Target& t) override;
  std::vector<Target> targets() override;

  CommitResult commit_round(std::span<const Record> round) override;
  std::vector<Record> top_k(int64_t workload_id, std::string_view target, int k) override;
  std::optional<Record> record(int64_t id) override;
  int64_t count_records(const RecordFilter& filter) override;
  std::vector<Record> ok_records(std::string_view target, int64_t after_id = 0) override;
  /// `visit` must not call back into this database.
  void for_each_record(const RecordFilter& filter,
                       const std::function<void(const Workload&, const Record&)>& visit) override;
  std::vector<WorkloadSummary> summaries() override;
  DbStats stats() override;
  int64_t prune(int keep) override;

  int64_t create_run(std::string_view what, const Json& args) override;
  void update_run(int64_t id, RunState state, const Json& progress) override;
  std::optional<TuningRun> run(int64_t id) override;
  std::vector<TuningRun> runs() override;

  void save_cost_model(const CostModelBlob& m) override;
  std::optional<CostModelBlob> load_cost_model(std::string_view target, int feature_version,
                                               std::string_view kind) override;

 private:
  int64_t ensure_target(const std::string& name);
  bool matches(const Record& r, const RecordFilter& f) const;

  std::mutex mu_;
  std::map<int64_t, Workload> workloads_;        // by id
  std::map<std::string, int64_t> workload_ids_;  // hash -> id
  std::map<std::string, Target> targets_;        // by name
  std::map<int64_t, Record> records_;            // by id
  std::map<std::string, int64_t> record_keys_;   // key -> id
  std::map<int64_t, TuningRun> runs_;
  std::map<std::tuple<std::string, int, std::string>, CostModelBlob> models_;
  int64_t next_id_ = 1;
};

}  // namespace tuner::db
