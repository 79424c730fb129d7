#include "db/sqlite_database.h"

#include <unistd.h>

#include <fmt/format.h>
#include <sqlite3.h>

#include <filesystem>
#include <map>
#include <optional>

#include "db/schema.h"
#include "db/sqlite_conn.h"
#include "db/sqlite_rows.h"
#include "db/timestamp.h"
#include "support/atomic_file.h"
#include "support/error.h"
#include "support/json.h"
#include "support/log.h"

namespace tuner::db {

namespace fs = std::filesystem;
using sqlite::Connection;
using sqlite::kRecordCols;
using sqlite::kRunCols;
using sqlite::kWorkloadCols;
using sqlite::record_row;
using sqlite::run_row;
using sqlite::Stmt;
using sqlite::workload_row;

namespace {

// " WHERE ..." for a filter over `records r` joined with `targets t`; parameters in the
// order workload, target, status, run (only the set ones).
std::string where_clause(const RecordFilter& f) {
  std::vector<std::string> terms;
  if (f.workload_id) terms.push_back("r.workload_id = ?");
  if (f.target) terms.push_back("t.name = ?");
  if (f.status) terms.push_back(f.status == MeasureStatus::Ok ? "r.status = 'ok'" : "r.status = ?");
  if (f.run_id) terms.push_back("r.run_id = ?");
  if (terms.empty()) return " ";
  return " WHERE " + fmt::format("{}", fmt::join(terms, " AND ")) + " ";
}

void bind_filter(Stmt& q, const RecordFilter& f) {
  int i = 0;
  if (f.workload_id) q.bind(++i, *f.workload_id);
  if (f.target) q.bind(++i, *f.target);
  if (f.status && *f.status != MeasureStatus::Ok) q.bind(++i, status_name(*f.status));
  if (f.run_id) q.bind(++i, *f.run_id);
}

std::optional<int64_t> target_id(Connection& c, std::string_view name) {
  auto q = c.query("SELECT id FROM targets WHERE name = ?");
  q.bind(1, name);
  if (!q.step()) return std::nullopt;
  return q.i64(0);
}

int64_t ensure_target(Connection& c, const std::string& name) {
  if (auto id = target_id(c, name)) return *id;
  auto q = c.query("INSERT INTO targets (name, hardware, created) VALUES (?, '{}', ?)");
  q.binds(name, now_ms()).run();
  return c.last_insert_rowid();
}

}  // namespace

// ---- opening

SqliteDatabase::SqliteDatabase(std::string path, SqliteOptions options)
    : path_(std::move(path)), options_(options) {}

namespace {

// A file moved or deleted under its writer: SQLite does not checkpoint it on close, so the
// transactions committed since the last checkpoint would stay in the WAL left at the old path
// (lost to the moved file, and read as part of whatever database is put at that path next).
// Copies them into the moved file and empties that WAL. Best effort: nothing to say if not.
void save_wal_of_moved_file(Connection& c) {
  try {
    if (c.file_moved()) c.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  } catch (const sqlite::SqliteError&) {
  }
}

}  // namespace

SqliteDatabase::~SqliteDatabase() {
  reader_.reset();
  if (writer_) save_wal_of_moved_file(*writer_);
  writer_.reset();  // the last connection checkpoints and removes the WAL
}

void check_database_path(const std::string& path) {
  USER_CHECK(path.rfind("file:", 0) != 0)
      << "tuning database '" << path << "' is an SQLite URI, which Tuner does "
      << "not open: give the database's file path";
  // "x.db/" would have its directory created before SQLite refused the path.
  USER_CHECK(path.empty() || path.back() != '/')
      << "tuning database '" << path << "' ends with '/': give the database's file path";
}

std::unique_ptr<SqliteDatabase> SqliteDatabase::open(const std::string& path,
                                                     const SqliteOptions& options) {
  check_database_path(path);
  std::unique_ptr<SqliteDatabase> db(new SqliteDatabase(path, options));
  const int deadline = options.busy_deadline_ms;
  FileCheck check = sqlite::retry_busy(path, deadline, [&] {
    return check_database_file(path, options.quick_check, options.busy_timeout_ms);
  });
  try {
    if (options.mode == OpenMode::ReadOnly) {
      USER_CHECK(check.exists) << "no tuning database at '" << path
                               << "' (`tuner db import FILE` or a tuning run creates one)";
      USER_CHECK(check.schema_version == kSchemaVersion)
          << "tuning database '" << path << "' has the older schema version "
          << check.schema_version << "; a command that writes to it (`tuner db import`, "
          << "`tuner db prune`, a tuning run) upgrades it";
    } else {
      // SQLite would open a private temporary database: the records would vanish at exit.
      USER_CHECK(!path.empty() && path != ":memory:")
          << "this command writes tuning records and needs a database file (--db PATH)";
      fs::path parent = fs::path(path).parent_path();
      std::error_code ec;
      if (!parent.empty()) fs::create_directories(parent, ec);
      USER_CHECK(!ec) << "cannot create the directory of tuning database '" << path
                      << "': " << ec.message();
      db->writer_ = std::make_unique<Connection>(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                                                 options.busy_timeout_ms);
      Connection& w = *db->writer_;
      sqlite::retry_busy(path, deadline, [&] {
        auto mode = w.column("PRAGMA journal_mode = WAL");
        USER_CHECK(!mode.empty() && mode[0] == "wal")
            << "tuning database '" << path << "' cannot use a write-ahead log (journal mode "
            << (mode.empty() ? "?" : mode[0]) << ")";
      });
      // A 64 MB page cache keeps the indexes' upper levels hot for commits; checkpointing
      // every 10,000 WAL pages (not SQLite's 1,000) copies each hot index page into the file
      // once per many rounds instead of every few rounds (bench/db_bench: 22 -> 14 ms/round).
      w.exec(
          "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA cache_size = -65536; "
          "PRAGMA wal_autocheckpoint = 10000;");
      sqlite::retry_busy(path, deadline, [&] { return migrate(w); });
    }
    db->reader_ = std::make_unique<Connection>(path, SQLITE_OPEN_READONLY, options.busy_timeout_ms);
  } catch (const sqlite::SqliteError& e) {
    db->raise(e);
  }
  protect_input_file(path, "tuning database");  // no -o of this process may replace it
  return db;
}

void SqliteDatabase::raise(const sqlite::SqliteError& e) const {
  int code = e.primary();
  USER_CHECK(code != SQLITE_CORRUPT && code != SQLITE_NOTADB)
      << "tuning database '" << path_ << "' is corrupt (" << e.what() << "); run `tuner db verify`";
  // Writing needs the -wal and -shm files beside the database (reading does not).
  std::error_code ec;
  fs::path dir = fs::absolute(path_, ec).parent_path();
  USER_CHECK(code != SQLITE_CANTOPEN || access(dir.c_str(), W_OK) == 0)
      << "tuning database '" << path_ << "': its directory is not writable (writing records "
      << "needs the files " << path_ << "-wal and -shm beside it); copy the database elsewhere";
  // The environment (disk full, I/O error, permissions, a lock held too long): the user's.
  USER_CHECK(code != SQLITE_IOERR && code != SQLITE_FULL && code != SQLITE_CANTOPEN &&
             code != SQLITE_READONLY && code != SQLITE_PERM && code != SQLITE_NOMEM &&
             code != SQLITE_BUSY && code != SQLITE_LOCKED)
      << "tuning database '" << path_ << "': " << e.what();
  // A table or column dropped behind Tuner's back (its own schema has them all).
  std::string_view msg = e.what();
  USER_CHECK(msg.find("no such table") == msg.npos && msg.find("no such column") == msg.npos)
      << "tuning database '" << path_ << "' is damaged (" << msg << ")";
  INTERNAL_CHECK(false) << "SQLite error on '" << path_ << "': " << e.what() << " in "
                        << e.context();
  std::abort();
}

template <class F>
auto SqliteDatabase::read(F&& f, bool snapshot) {
  std::lock_guard lock(read_mu_);
  return read_on(*reader_, f, snapshot);
}

template <class F>
auto SqliteDatabase::read_on(Connection& c, F&& f, bool snapshot) {
  try {
    return sqlite::retry_busy(path_, options_.busy_deadline_ms, [&] {
      if (!snapshot) return f(c);
      sqlite::Transaction tx(c, "BEGIN");
      auto guard = [&] { tx.commit(); };
      if constexpr (std::is_void_v<decltype(f(c))>) {
        f(c);
        guard();
      } else {
        auto r = f(c);
        guard();
        return r;
      }
    });
  } catch (const sqlite::SqliteError& e) {
    raise(e);
  } catch (const sqlite::BadRow& e) {
    USER_ERROR() << "tuning database '" << path_ << "' is damaged: " << e.what();
  }
}

template <class F>
auto SqliteDatabase::write(F&& f) {
  INTERNAL_CHECK(writer_) << "tuning database '" << path_ << "' was opened read-only";
  std::lock_guard lock(write_mu_);
  // SQLite writes on into a file deleted under it: every record after that would be lost
  // without a word (a long-running server, a user cleaning up).
  bool moved = writer_->file_moved();
  if (moved) save_wal_of_moved_file(*writer_);
  USER_CHECK(!moved) << "tuning database '" << path_
                     << "' was deleted or replaced while in use: what is "
                     << "written now would be lost; restart to use the file now at that path";
  try {
    return sqlite::retry_busy(path_, options_.busy_deadline_ms, [&] {
      sqlite::Transaction tx(*writer_, "BEGIN IMMEDIATE");
      if constexpr (std::is_void_v<decltype(f(*writer_))>) {
        f(*writer_);
        tx.commit();
      } else {
        auto r = f(*writer_);
        tx.commit();
        return r;
      }
    });
  } catch (const sqlite::SqliteError& e) {
    raise(e);
  }
}

void SqliteDatabase::read_apart(const std::function<void(Connection&)>& f) {
  std::optional<Connection> own;
  try {
    own.emplace(path_, SQLITE_OPEN_READONLY, options_.busy_timeout_ms);
  } catch (const sqlite::SqliteError& e) {
    raise(e);
  }
  read_on(*own, f, /*snapshot=*/true);
}

void SqliteDatabase::with_reader(bool snapshot, const std::function<void(Connection&)>& f) {
  read(f, snapshot);
}

int SqliteDatabase::schema_version() {
  return read([](Connection& c) { return std::stoi(c.column("PRAGMA user_version").at(0)); });
}

// ---- workloads and targets

int64_t SqliteDatabase::commit_workload(const Workload& w) {
  check_workload(w);
  // Most commits name a workload already stored: answer those without the write lock.
  if (auto known = find_workload(w.hash)) {
    USER_CHECK(known->canonical == w.canonical)
        << "workload hash " << w.hash << " is already taken by a different DAG";
    return known->id;
  }
  std::string shapes = w.shapes.dump();
  return write([&](Connection& c) -> int64_t {
    {
      auto q = c.query("SELECT id, canonical FROM workloads WHERE hash = ?");
      q.bind(1, w.hash);
      if (q.step()) {
        USER_CHECK(q.text(1) == w.canonical)
            << "workload hash " << w.hash << " is already taken by a different DAG";
        return q.i64(0);
      }
    }
    auto q = c.query(
        "INSERT INTO workloads (hash, op, params, shapes, flops, canonical, created) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)");
    q.binds(w.hash, w.op, w.params, shapes, w.flops, w.canonical, now_ms()).run();
    return c.last_insert_rowid();
  });
}

std::optional<Workload> SqliteDatabase::workload(int64_t id) {
  return read([&](Connection& c) -> std::optional<Workload> {
    auto q = c.query(kWorkloadCols + "WHERE id = ?");
    q.bind(1, id);
    if (!q.step()) return std::nullopt;
    return workload_row(q);
  });
}

std::optional<Workload> SqliteDatabase::find_workload(std::string_view hash) {
  return read([&](Connection& c) -> std::optional<Workload> {
    auto q = c.query(kWorkloadCols + "WHERE hash = ?");
    q.bind(1, hash);
    if (!q.step()) return std::nullopt;
    return workload_row(q);
  });
}

std::vector<Workload> SqliteDatabase::workloads() {
  return read([&](Connection& c) {
    std::vector<Workload> out;
    auto q = c.query(kWorkloadCols + "ORDER BY hash");
    while (q.step()) out.push_back(workload_row(q));
    return out;
  });
}

int64_t SqliteDatabase::commit_target(const Target& t) {
  USER_CHECK(!t.name.empty()) << "a target needs a name";
  USER_CHECK(t.hardware.is_object()) << "target hardware parameters must be a JSON object";
  std::string hw = t.hardware.dump();
  return write([&](Connection& c) {
    auto q = c.query(
        "INSERT INTO targets (name, hardware, created) VALUES (?, ?, ?) "
        "ON CONFLICT (name) DO UPDATE SET hardware = excluded.hardware");
    q.binds(t.name, hw, now_ms()).run();
    return *target_id(c, t.name);
  });
}

std::vector<Target> SqliteDatabase::targets() {
  return read([&](Connection& c) {
    std::vector<Target> out;
    auto q = c.query("SELECT id, name, hardware FROM targets ORDER BY name");
    while (q.step()) out.push_back({q.i64(0), q.text(1), parse_json(q.text(2))});
    return out;
  });
}

// ---- records

CommitResult SqliteDatabase::commit_round(std::span<const Record> round) {
  // Everything that can be checked without the database happens before taking the lock.
  std::vector<Record> rs(round.begin(), round.end());
  std::vector<std::string> times(rs.size());
  int64_t now = now_ms();
  for (size_t i = 0; i < rs.size(); ++i) {
    Record& r = rs[i];
    check_record(r);
    r.trace = compact_trace(r.trace);
    r.median = r.status == MeasureStatus::Ok ? std::optional(median_of(r.times)) : std::nullopt;
    if (r.created_ms == 0) r.created_ms = now;
    times[i] = Json(r.times).dump();
  }
  return write([&](Connection& c) {
    CommitResult out;
    std::map<int64_t, std::string> hashes;  // workload id -> hash, for this round
    std::map<std::string, int64_t> tids;    // target name -> id
    for (size_t i = 0; i < rs.size(); ++i) {
      const Record& r = rs[i];
      auto h = hashes.find(r.workload_id);
      if (h == hashes.end()) {
        auto q = c.query("SELECT hash FROM workloads WHERE id = ?");
        q.bind(1, r.workload_id);
        USER_CHECK(q.step()) << "record names unknown workload id " << r.workload_id;
        h = hashes.emplace(r.workload_id, q.text(0)).first;
      }
      auto t = tids.find(r.target);
      if (t == tids.end()) t = tids.emplace(r.target, ensure_target(c, r.target)).first;
      if (r.run_id) {
        auto q = c.query("SELECT 1 FROM tuning_runs WHERE id = ?");
        q.bind(1, *r.run_id);
        USER_CHECK(q.step()) << "record names unknown tuning run " << *r.run_id;
      }
      std::string key = record_key(r, h->second);
      auto q = c.query(
          "INSERT INTO records (workload_id, target_id, key, trace, trace_version, status, "
          "times, median, error, build_seconds, run_seconds, worker, tuner_version, "
          "feature_version, run_id, created) VALUES "
          "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING");
      q.binds(r.workload_id, t->second, key, r.trace, r.trace_version, status_name(r.status),
              times[i], r.median, r.error, r.build_seconds, r.run_seconds, r.worker,
              r.tuner_version, r.feature_version, r.run_id, r.created_ms)
          .run();
      if (c.changes() == 1) {
        out.ids.push_back(c.last_insert_rowid());
        ++out.inserted;
      } else {
        auto k = c.query("SELECT id FROM records WHERE key = ?");
        k.bind(1, key);
        INTERNAL_CHECK(k.step()) << "record key " << key << " conflicted but is absent";
        out.ids.push_back(k.i64(0));
      }
    }
    return out;
  });
}

void SqliteDatabase::warn_skipped(const std::exception& bad_row) {
  constexpr size_t kShown = 3;  // then one line for the rest
  std::lock_guard<std::mutex> lock(warned_mu_);
  if (warned_.size() > kShown || !warned_.insert(bad_row.what()).second) return;
  if (warned_.size() <= kShown)
    log(LogLevel::Info, "warning: tuning database '{}' is damaged: {}; skipped (`tuner db verify` lists every damaged row)",
        path_, bad_row.what());
  else
    log(LogLevel::Info, "warning: tuning database '{}': more damaged rows skipped", path_);
}

std::vector<Record> SqliteDatabase::top_k(int64_t workload_id, std::string_view target, int k) {
  if (k <= 0) return {};
  return read([&](Connection& c) {
    std::vector<Record> out;
    auto tid = target_id(c, target);
    if (!tid) return out;
    auto q = c.query(kRecordCols +
                     "WHERE r.workload_id = ? AND r.target_id = ? AND r.status = 'ok' "
                     "AND r.worker <> ? ORDER BY r.median, r.id LIMIT ?");
    q.binds(workload_id, *tid, std::string(kModelWorker), k);
    while (q.step()) {
      try {
        out.push_back(record_row(q));
      } catch (const sqlite::BadRow& e) {
        warn_skipped(e);  // the next best still compiles
      }
    }
    return out;
  });
}

std::optional<Record> SqliteDatabase::record(int64_t id) {
  return read([&](Connection& c) -> std::optional<Record> {
    auto q = c.query(kRecordCols + "WHERE r.id = ?");
    q.bind(1, id);
    if (!q.step()) return std::nullopt;
    return record_row(q);
  });
}

int64_t SqliteDatabase::count_records(const RecordFilter& f) {
  return read([&](Connection& c) {
    auto q = c.query("SELECT count(*) FROM records r JOIN targets t ON t.id = r.target_id" +
                     where_clause(f));
    bind_filter(q, f);
    q.step();
    return q.i64(0);
  });
}

std::vector<Record> SqliteDatabase::ok_records(std::string_view target, int64_t after_id) {
  return read([&](Connection& c) {
    std::vector<Record> out;
    auto tid = target_id(c, target);
    if (!tid) return out;
    auto q = c.query(kRecordCols +
                     "WHERE r.target_id = ? AND r.status = 'ok' AND r.worker <> ? AND r.id > ? "
                     "ORDER BY r.id");
    q.binds(*tid, std::string(kModelWorker), after_id);
    while (q.step()) out.push_back(record_row(q));
    return out;
  });
}

void SqliteDatabase::for_each_record(
    const RecordFilter& f, const std::function<void(const Workload&, const Record&)>& visit) {
  read_apart(
      [&](Connection& c) {
        std::map<int64_t, Workload> ws;
        {
          auto q = c.query(kWorkloadCols);
          while (q.step()) {
            Workload w = workload_row(q);
            ws.emplace(w.id, std::move(w));
          }
        }
        auto q = c.query(kRecordCols + "JOIN workloads w ON w.id = r.workload_id" +
                         where_clause(f) + "ORDER BY w.hash, t.name, r.created, r.key");
        bind_filter(q, f);
        while (q.step()) {
          std::optional<Record> r;
          try {
            r = record_row(q);
          } catch (const sqlite::BadRow& e) {
            if (!f.skip_unreadable) throw;
            warn_skipped(e);
            continue;
          }
          visit(ws.at(r->workload_id), *r);
        }
      });
}

std::vector<WorkloadSummary> SqliteDatabase::summaries() {
  return read([&](Connection& c) {
    std::vector<WorkloadSummary> out;
    auto q = c.query(
        "SELECT r.workload_id, t.name, count(*), sum(r.status = 'ok'), "
        "min(CASE WHEN r.worker <> ? THEN r.median END) "
        "FROM records r JOIN targets t ON t.id = r.target_id "
        "JOIN workloads w ON w.id = r.workload_id "
        "GROUP BY r.workload_id, r.target_id ORDER BY w.hash, t.name");
    q.binds(std::string(kModelWorker));
    while (q.step()) out.push_back({q.i64(0), q.text(1), q.i64(2), q.i64(3), q.opt_f64(4)});
    return out;
  });
}

DbStats SqliteDatabase::stats() {
  return read(
      [&](Connection& c) {
        DbStats s;
        auto count = [&](const char* sql) {
          auto q = c.query(sql);
          q.step();
          return q.i64(0);
        };
        s.workloads = count("SELECT count(*) FROM workloads");
        s.targets = count("SELECT count(*) FROM targets");
        s.records = count("SELECT count(*) FROM records");
        s.tuning_runs = count("SELECT count(*) FROM tuning_runs");
        s.cost_models = count("SELECT count(*) FROM cost_models");
        auto group = [&](const char* sql, std::vector<std::pair<std::string, int64_t>>& into) {
          auto q = c.query(sql);
          while (q.step()) into.emplace_back(q.text(0), q.i64(1));
        };
        group("SELECT status, count(*) FROM records GROUP BY status ORDER BY status", s.by_status);
        group(
            "SELECT t.name, count(*) FROM records r JOIN targets t ON t.id = r.target_id "
            "GROUP BY t.name ORDER BY t.name",
            s.by_target);
        group("SELECT worker, count(*) FROM records GROUP BY worker ORDER BY worker", s.by_worker);
        return s;
      },
      /*snapshot=*/true);
}

int64_t SqliteDatabase::prune(int keep) {
  USER_CHECK(keep >= 1) << "prune must keep at least 1 record per workload and target, not "
                        << keep;
  return write([&](Connection& c) {
    // The fastest tuning records, and the records of the latest validation and in-model
    // timing of each (workload, target), which compile chooses by. Validation re-measures
    // the fastest: ranked with them, its rows took the places of distinct schedules.
    auto q = c.query(
        "DELETE FROM records WHERE id NOT IN (SELECT id FROM (SELECT id, row_number() OVER "
        "(PARTITION BY workload_id, target_id ORDER BY median, id) AS n FROM records "
        "WHERE status = 'ok' AND worker NOT IN (?1, ?2)) WHERE n <= ?3 "
        "UNION SELECT id FROM (SELECT id, created, max(created) OVER (PARTITION BY "
        "workload_id, target_id, worker) AS latest FROM records "
        "WHERE status = 'ok' AND worker IN (?1, ?2)) WHERE created = latest)");
    q.binds(kValidationWorker, kModelWorker, keep).run();
    return c.changes();
  });
}

// ---- tuning runs

int64_t SqliteDatabase::create_run(std::string_view what, const Json& args) {
  std::string a = args.dump();
  return write([&](Connection& c) {
    auto q = c.query(
        "INSERT INTO tuning_runs (what, args, state, progress, started) "
        "VALUES (?, ?, 'running', '{}', ?)");
    q.binds(what, a, now_ms()).run();
    return c.last_insert_rowid();
  });
}

void SqliteDatabase::update_run(int64_t id, RunState state, const Json& progress) {
  std::string p = progress.dump();
  write([&](Connection& c) {
    auto q = c.query("UPDATE tuning_runs SET state = ?, progress = ?, finished = ? WHERE id = ?");
    std::optional<int64_t> finished;
    if (state != RunState::Running) finished = now_ms();
    q.binds(run_state_name(state), p, finished, id).run();
    USER_CHECK(c.changes() == 1) << "no tuning run " << id;
  });
}

std::optional<TuningRun> SqliteDatabase::run(int64_t id) {
  return read([&](Connection& c) -> std::optional<TuningRun> {
    auto q = c.query(kRunCols + "WHERE id = ?");
    q.bind(1, id);
    if (!q.step()) return std::nullopt;
    return run_row(q);
  });
}

std::vector<TuningRun> SqliteDatabase::runs() {
  return read([&](Connection& c) {
    std::vector<TuningRun> out;
    auto q = c.query(kRunCols + "ORDER BY started DESC, id DESC");
    while (q.step()) out.push_back(run_row(q));
    return out;
  });
}

// ---- cost models

void SqliteDatabase::save_cost_model(const CostModelBlob& m) {
  USER_CHECK(!m.target.empty() && !m.kind.empty()) << "a cost model needs a target and a kind";
  write([&](Connection& c) {
    int64_t tid = ensure_target(c, m.target);
    auto q = c.query(
        "INSERT INTO cost_models (target_id, feature_version, kind, blob, num_records, created) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (target_id, feature_version, kind) DO UPDATE SET "
        "blob = excluded.blob, num_records = excluded.num_records, created = excluded.created");
    q.binds(tid, m.feature_version, m.kind);
    q.bind_blob(4, m.blob);
    q.bind(5, m.num_records).bind(6, now_ms());
    q.run();
  });
}

std::optional<CostModelBlob> SqliteDatabase::load_cost_model(std::string_view target,
                                                             int feature_version,
                                                             std::string_view kind) {
  return read([&](Connection& c) -> std::optional<CostModelBlob> {
    auto q = c.query(
        "SELECT m.blob, m.num_records, m.created FROM cost_models m "
        "JOIN targets t ON t.id = m.target_id "
        "WHERE t.name = ? AND m.feature_version = ? AND m.kind = ?");
    q.binds(target, feature_version, kind);
    if (!q.step()) return std::nullopt;
    return CostModelBlob{std::string(target), feature_version, std::string(kind),
                         q.blob(0),           q.i64(1),        q.i64(2)};
  });
}

}  // namespace tuner::db
