// The database schema and its migrations. The schema version is SQLite's user_version; the
// application id marks the file as a Tuner tuning database. A migration runs inside the
// caller's BEGIN IMMEDIATE transaction, so a crash leaves the old version or the new one.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace tuner::db {

namespace sqlite {
class Connection;
}

/// The schema version this Tuner writes and reads.
inline constexpr int kSchemaVersion = 1;
/// PRAGMA application_id of a Tuner database ("TUNR").
inline constexpr int32_t kApplicationId = 0x54554e52;
/// The first 16 bytes of every SQLite database file.
inline constexpr std::string_view kSqliteHeader{"SQLite format 3\0", 16};

/// One step of the schema: from version - 1 to version.
struct Migration {
  int version;
  const char* what;  // one line: what changes
  const char* sql;   // statements run in order
};

/// Every migration, oldest first; the last has version kSchemaVersion.
std::span<const Migration> migrations();

/// Brings the database open on `c` to the last version of `steps` (default: migrations()) in
/// one BEGIN IMMEDIATE transaction, and marks it with kApplicationId. Returns the version it
/// found. Throws a UserError naming `c.path()` when the file is newer than `steps` or is some
/// other application's database. The caller retries on sqlite::BusyError.
int migrate(sqlite::Connection& c, std::span<const Migration> steps = migrations());

/// What check_database_file found.
struct FileCheck {
  bool exists = false;     // a non-empty file is at the path
  int schema_version = 0;  // 0: a new (empty) database
};

/// Inspects the file at `path` without writing to it: its header, application id and schema
/// version, and PRAGMA quick_check when `quick_check`. Throws a UserError naming the file and
/// the problem when it is not an SQLite database, is truncated or corrupt, belongs to another
/// application, or has a schema newer than `newest`; the file is left untouched (and so is
/// its directory: WAL side files the check created are removed again).
FileCheck check_database_file(const std::string& path, bool quick_check, int busy_timeout_ms,
                              int newest = kSchemaVersion);

}  // namespace tuner::db
