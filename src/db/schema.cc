#include "db/schema.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "db/sqlite_conn.h"
#include "support/error.h"

namespace tuner::db {

namespace fs = std::filesystem;

namespace {

// Version 1. Times are JSON arrays of seconds; timestamps are milliseconds since the epoch;
// status is the MeasureStatus name; median is set exactly for ok records.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE workloads (
  id        INTEGER PRIMARY KEY,
  hash      TEXT NOT NULL UNIQUE,
  op        TEXT NOT NULL,
  params    TEXT NOT NULL,
  shapes    TEXT NOT NULL,
  flops     REAL NOT NULL,
  canonical TEXT NOT NULL,
  created   INTEGER NOT NULL
);
CREATE TABLE targets (
  id       INTEGER PRIMARY KEY,
  name     TEXT NOT NULL UNIQUE,
  hardware TEXT NOT NULL,
  created  INTEGER NOT NULL
);
CREATE TABLE tuning_runs (
  id       INTEGER PRIMARY KEY,
  what     TEXT NOT NULL,
  args     TEXT NOT NULL,
  state    TEXT NOT NULL CHECK (state IN ('running', 'finished', 'failed', 'interrupted')),
  progress TEXT NOT NULL,
  started  INTEGER NOT NULL,
  finished INTEGER
);
CREATE TABLE records (
  id              INTEGER PRIMARY KEY,
  workload_id     INTEGER NOT NULL REFERENCES workloads(id),
  target_id       INTEGER NOT NULL REFERENCES targets(id),
  key             TEXT NOT NULL UNIQUE,
  trace           TEXT NOT NULL,
  trace_version   INTEGER NOT NULL,
  status          TEXT NOT NULL CHECK (status IN ('ok', 'INSTANTIATION', 'COMPILE_HOST',
                    'COMPILE_DEVICE', 'RUNTIME_DEVICE', 'WRONG_ANSWER', 'BUILD_TIMEOUT',
                    'RUN_TIMEOUT', 'UNKNOWN')),
  times           TEXT NOT NULL,
  median          REAL,
  error           TEXT NOT NULL,
  build_seconds   REAL NOT NULL,
  run_seconds     REAL NOT NULL,
  worker          TEXT NOT NULL,
  tuner_version   TEXT NOT NULL,
  feature_version INTEGER NOT NULL,
  run_id          INTEGER REFERENCES tuning_runs(id) ON DELETE SET NULL,
  created         INTEGER NOT NULL,
  CHECK ((status = 'ok') = (median IS NOT NULL))
);
-- top_k: the fastest ok records of a (workload, target) straight from the index.
CREATE INDEX records_best ON records (workload_id, target_id, median) WHERE status = 'ok';
CREATE INDEX records_pair ON records (workload_id, target_id, status);
-- ok_records(target, after_id) and counts by target.
CREATE INDEX records_target ON records (target_id, status);
CREATE INDEX records_run ON records (run_id) WHERE run_id IS NOT NULL;
CREATE TABLE cost_models (
  id              INTEGER PRIMARY KEY,
  target_id       INTEGER NOT NULL REFERENCES targets(id),
  feature_version INTEGER NOT NULL,
  kind            TEXT NOT NULL,
  blob            BLOB NOT NULL,
  num_records     INTEGER NOT NULL,
  created         INTEGER NOT NULL,
  UNIQUE (target_id, feature_version, kind)
);
)sql";

constexpr std::array<Migration, 1> kMigrations = {{
    {1, "workloads, targets, records, tuning runs, cost models", kSchemaV1},
}};
static_assert(kMigrations.back().version == kSchemaVersion);

int pragma_int(sqlite::Connection& c, const char* sql) {
  auto rows = c.column(sql);
  INTERNAL_CHECK(rows.size() == 1) << sql << " gave " << rows.size() << " rows";
  return std::stoi(rows[0]);
}

bool has_user_tables(sqlite::Connection& c) {
  return pragma_int(c, "SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'") > 0;
}

constexpr const char* kUntouched = "; the file was left untouched";

[[noreturn]] void newer_schema(const std::string& path, int version, int newest) {
  USER_ERROR() << "tuning database '" << path << "' has schema version " << version
               << ", newer than this tuner's " << newest << " (use a newer tuner)" << kUntouched;
}

[[noreturn]] void foreign_database(const std::string& path, int app) {
  USER_ERROR() << "'" << path << "' is an SQLite database but not a Tuner tuning database"
               << (app ? fmt::format(" (application id {:#x})", uint32_t(app)) : "") << kUntouched;
}

// A Tuner database's tables without its schema version (both are written in one
// transaction): the version was reset by hand or the file damaged; migrating would fail.
void check_versioned(sqlite::Connection& c, int version) {
  USER_CHECK(version != 0 || !has_user_tables(c))
      << "tuning database '" << c.path()
      << "' has Tuner's tables but no schema version (PRAGMA user_version is 0): it was edited "
         "or damaged; `tuner db export` from a backup, or a new database"
      << kUntouched;
}

uint32_t be(const unsigned char* p, int n) {
  uint32_t v = 0;
  for (int i = 0; i < n; ++i) v = (v << 8) | p[i];
  return v;
}

// The first problem of a quick_check result (rows may hold several lines each).
std::string first_problem(const std::vector<std::string>& rows) {
  for (auto& row : rows) {
    size_t start = 0;
    while (start <= row.size()) {
      size_t end = row.find('\n', start);
      std::string line = row.substr(start, end == std::string::npos ? end : end - start);
      if (!line.empty() && line.rfind("***", 0) != 0) return line;
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  return rows.empty() ? "no result" : rows[0];
}

FileCheck check_open_file(const std::string& path, bool quick_check, int busy_timeout_ms,
                          int newest) {
  sqlite::Connection c(path, SQLITE_OPEN_READONLY, busy_timeout_ms);
  // One read transaction: every check below sees the same snapshot.
  sqlite::Transaction tx(c, "BEGIN");
  int app = pragma_int(c, "PRAGMA application_id");
  int version = pragma_int(c, "PRAGMA user_version");
  if (app != kApplicationId && (app != 0 || version != 0 || has_user_tables(c)))
    foreign_database(path, app);
  if (version > newest) newer_schema(path, version, newest);
  check_versioned(c, version);
  if (quick_check) {
    auto rows = c.column("PRAGMA quick_check");
    USER_CHECK(rows.size() == 1 && rows[0] == "ok")
        << "tuning database '" << path << "' is corrupt (quick_check: " << first_problem(rows)
        << ")" << kUntouched;
  }
  return {true, version};
}

}  // namespace

std::span<const Migration> migrations() { return kMigrations; }

int migrate(sqlite::Connection& c, std::span<const Migration> steps) {
  INTERNAL_CHECK(!steps.empty()) << "no migrations";
  int newest = steps.back().version;
  sqlite::Transaction tx(c, "BEGIN IMMEDIATE");
  int app = pragma_int(c, "PRAGMA application_id");
  int version = pragma_int(c, "PRAGMA user_version");
  if (app != kApplicationId && (app != 0 || version != 0 || has_user_tables(c)))
    foreign_database(c.path(), app);
  if (version > newest) newer_schema(c.path(), version, newest);
  check_versioned(c, version);
  if (version == newest) {
    tx.commit();
    return version;
  }
  for (const Migration& m : steps) {
    if (m.version <= version) continue;
    c.exec(m.sql);
  }
  c.exec(
      fmt::format("PRAGMA user_version = {}; PRAGMA application_id = {};", newest, kApplicationId)
          .c_str());
  tx.commit();
  return version;
}

FileCheck check_database_file(const std::string& path, bool quick_check, int busy_timeout_ms,
                              int newest) {
  std::error_code ec;
  auto st = fs::status(path, ec);
  if (!fs::exists(st)) return {};
  USER_CHECK(fs::is_regular_file(st)) << "tuning database '" << path << "' is not a file";
  uintmax_t size = fs::file_size(path, ec);
  USER_CHECK(!ec) << "cannot read tuning database '" << path << "': " << ec.message();
  std::string wal = path + "-wal", shm = path + "-shm";
  bool had_wal = fs::exists(wal, ec), had_shm = fs::exists(shm, ec);
  if (size == 0 && (!had_wal || fs::file_size(wal, ec) == 0)) return {};

  // The header, read directly: a file that is not SQLite is never handed to SQLite.
  unsigned char header[100] = {};
  {
    std::ifstream in(path, std::ios::binary);
    USER_CHECK(in) << "cannot open tuning database '" << path << "' for reading";
    in.read(reinterpret_cast<char*>(header), sizeof header);
  }
  size_t n = std::min<uintmax_t>(size, kSqliteHeader.size());
  if (size > 0) {
    USER_CHECK(std::memcmp(header, kSqliteHeader.data(), n) == 0)
        << "'" << path << "' is not an SQLite database (its header is wrong)" << kUntouched;
    USER_CHECK(size >= 100) << "tuning database '" << path << "' is truncated (" << size
                            << " bytes, shorter than its header)" << kUntouched;
  }
  auto truncated = [&]() -> uintmax_t {  // the size the header promises, or 0 if consistent
    uint32_t page = be(header + 16, 2);
    if (page == 1) page = 65536;
    uint64_t pages = be(header + 28, 4);
    bool count_valid = be(header + 24, 4) == be(header + 92, 4) && pages > 0;
    if (count_valid && pages * page > size) return pages * page;
    if (page >= 512 && size % page) return (size / page + 1) * page;  // at least
    return 0;
  };

  auto cleanup = [&] {  // SQLite's side files the failed check created: remove them again
    std::error_code e;
    if (!had_wal && fs::exists(wal, e) && fs::file_size(wal, e) == 0) fs::remove(wal, e);
    if (!had_shm && !fs::exists(wal, e)) fs::remove(shm, e);
  };
  try {
    return check_open_file(path, quick_check, busy_timeout_ms, newest);
  } catch (const sqlite::BusyError&) {
    throw;  // the caller retries
  } catch (const sqlite::SqliteError& e) {
    cleanup();
    uintmax_t want = size > 0 && e.primary() == SQLITE_CORRUPT ? truncated() : 0;
    USER_CHECK(want == 0) << "tuning database '" << path << "' is truncated (" << size << " of "
                          << want << " bytes)" << kUntouched;
    USER_CHECK(e.primary() != SQLITE_NOTADB)
        << "'" << path << "' is not an SQLite database" << kUntouched;
    USER_CHECK(e.primary() != SQLITE_CORRUPT)
        << "tuning database '" << path << "' is corrupt (" << e.what() << ")" << kUntouched;
    USER_ERROR() << "cannot read tuning database '" << path << "': " << e.what();
  } catch (...) {
    cleanup();
    throw;
  }
}

}  // namespace tuner::db
