// The tuning database in one SQLite file (default tuning_logs/tuning.db).
//
// Durability and concurrency: WAL journal, synchronous=FULL, every write one BEGIN IMMEDIATE
// transaction (one per measurement round), queries on a separate read-only connection. Many
// processes may open the same file: SQLite's busy_timeout plus a retry loop keep SQLITE_BUSY
// from ever reaching the caller (a lock held longer than busy_deadline_ms is a UserError).
//
// Opening first inspects the file read-only (header, application id, schema version,
// PRAGMA quick_check). A file that is not an SQLite database, is truncated or corrupt, belongs
// to another program or has a newer schema is one UserError naming the file and the problem,
// and nothing has written to it. An older schema is migrated (ReadWrite only).
#pragma once

#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "db/database.h"

namespace tuner::db {

namespace sqlite {
class Connection;
class SqliteError;
}  // namespace sqlite

enum class OpenMode {
  ReadOnly,   // queries only; the file must exist. Writes are a bug (InternalError).
  ReadWrite,  // creates the file (and its directory) when missing, migrates an old schema
};

struct SqliteOptions {
  OpenMode mode = OpenMode::ReadWrite;
  /// Run PRAGMA quick_check when opening (linear in the file size).
  bool quick_check = true;
  /// SQLite's busy handler: how long one statement waits for a lock.
  int busy_timeout_ms = 2000;
  /// How long a transaction is retried on SQLITE_BUSY before giving up with a UserError.
  int busy_deadline_ms = 60000;
};

/// What SqliteDatabase::verify found.
struct VerifyReport {
  std::vector<std::string> problems;  // empty when everything is consistent
  int64_t workloads = 0, records = 0;
  bool ok() const { return problems.empty(); }
};

/// Fails with a UserError when `path` is an SQLite URI ("file:..."): Tuner opens plain paths,
/// so one would be taken as a relative path (creating a folder "file:" here).
void check_database_path(const std::string& path);

class SqliteDatabase final : public Database {
 public:
  /// Opens (or, ReadWrite, creates) the database at `path`. See the file comment for errors.
  static std::unique_ptr<SqliteDatabase> open(const std::string& path,
                                              const SqliteOptions& options = {});
  ~SqliteDatabase() override;

  const std::string& path() const { return path_; }
  /// The file's schema version (kSchemaVersion once opened ReadWrite).
  int schema_version();
  /// Full check: PRAGMA integrity_check and foreign_key_check, every workload re-hashed from
  /// its canonical text, every record's trace, times, median and content key recomputed.
  VerifyReport verify();

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
  SqliteDatabase(std::string path, SqliteOptions options);
  /// Runs f(connection) on the read-only connection (inside a read transaction when
  /// `snapshot`), retrying on busy; SQLite errors become UserErrors naming the file.
  template <class F>
  auto read(F&& f, bool snapshot = false);
  /// read() on connection `c`.
  template <class F>
  auto read_on(sqlite::Connection& c, F&& f, bool snapshot);
  /// read(f, true) on a connection of its own, for a visit whose callback may take long (a
  /// server streaming an export to a slow client held the shared reader, and every other
  /// query of the server waited).
  void read_apart(const std::function<void(sqlite::Connection&)>& f);
  /// Runs f(connection) in one BEGIN IMMEDIATE transaction on the write connection.
  template <class F>
  auto write(F&& f);
  /// read() for code in other files (sqlite_verify.cc).
  void with_reader(bool snapshot, const std::function<void(sqlite::Connection&)>& f);
  [[noreturn]] void raise(const sqlite::SqliteError& e) const;
  /// Warns (once per row and database) that a row that does not decode was skipped.
  void warn_skipped(const std::exception& bad_row);

  std::string path_;
  SqliteOptions options_;
  std::mutex read_mu_, write_mu_;
  std::unique_ptr<sqlite::Connection> reader_, writer_;
  std::mutex warned_mu_;
  std::set<std::string> warned_;  // rows warn_skipped has reported
};

}  // namespace tuner::db
