// A thin RAII layer over the SQLite C API: a connection with a cache of prepared statements,
// and statement handles that reset themselves at the end of their scope (an unreset statement
// would pin a WAL snapshot). Used only inside src/db.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace tuner::db::sqlite {

/// An error reported by SQLite: its (extended) result code and message.
class SqliteError : public std::runtime_error {
 public:
  SqliteError(int code, const std::string& msg, std::string context = "")
      : std::runtime_error(msg), code_(code), context_(std::move(context)) {}
  int code() const { return code_; }
  /// The statement or step that failed (for internal errors).
  const std::string& context() const { return context_; }
  /// The primary result code (SQLITE_BUSY, SQLITE_CORRUPT, ...).
  int primary() const { return code_ & 0xff; }

 private:
  int code_;
  std::string context_;
};

/// SQLITE_BUSY or SQLITE_LOCKED: the operation may succeed when retried.
class BusyError : public SqliteError {
 public:
  using SqliteError::SqliteError;
};

class Connection;

/// Throws the UserError for a database that stayed busy for `deadline_ms`.
[[noreturn]] void busy_give_up(const std::string& path, int deadline_ms, const BusyError& e);

/// After this long locked (or half its deadline), a waiting command says why it waits, once.
inline constexpr int kBusyNoticeMs = 5000;
/// Prints, on stderr, that `path` is locked by another process and how long this waits.
void busy_notice(const std::string& path, int deadline_ms);

/// A prepared statement borrowed from a connection's cache; resets and unbinds on destruction.
class Stmt {
 public:
  Stmt(Connection& conn, sqlite3_stmt* s) : conn_(&conn), s_(s) {}
  Stmt(Stmt&& o) noexcept : conn_(o.conn_), s_(o.s_) { o.s_ = nullptr; }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  ~Stmt();

  Stmt& bind(int i, int64_t v);
  Stmt& bind(int i, int v) { return bind(i, int64_t(v)); }
  Stmt& bind(int i, double v);
  Stmt& bind(int i, std::string_view v);  // as TEXT
  Stmt& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
  Stmt& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
  Stmt& bind_blob(int i, std::string_view bytes);
  Stmt& bind_null(int i);
  template <class T>
  Stmt& bind(int i, const std::optional<T>& v) {
    return v ? bind(i, *v) : bind_null(i);
  }
  /// Binds the arguments to parameters 1, 2, ...
  template <class... A>
  Stmt& binds(const A&... a) {
    int i = 0;
    (bind(++i, a), ...);
    return *this;
  }

  /// Steps once: true when a row is ready. Throws BusyError / SqliteError.
  bool step();
  /// Steps to the end (a statement without results).
  void run() {
    while (step()) {
    }
  }

  bool is_null(int col) const;
  int64_t i64(int col) const;
  double f64(int col) const;
  std::optional<double> opt_f64(int col) const;
  std::optional<int64_t> opt_i64(int col) const;
  std::string text(int col) const;
  std::string blob(int col) const;

 private:
  Connection* conn_;
  sqlite3_stmt* s_;
};

class Connection {
 public:
  /// Opens `path` with sqlite3_open_v2 flags; busy_timeout_ms sets SQLite's busy handler.
  /// Throws SqliteError when the file cannot be opened.
  Connection(const std::string& path, int flags, int busy_timeout_ms);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  /// Runs one or more statements without results.
  void exec(const char* sql);
  /// A cached prepared statement for `sql`.
  Stmt query(const std::string& sql);
  /// The first column of every row of `sql`, as text.
  std::vector<std::string> column(const char* sql);
  int64_t last_insert_rowid() const;
  int64_t changes() const;
  /// Whether the database file was deleted or renamed since it was opened (SQLite's
  /// SQLITE_FCNTL_HAS_MOVED): what is written then is lost with the unlinked file.
  bool file_moved() const;
  const std::string& path() const { return path_; }

  /// Throws the error for result code `rc` (BusyError for busy/locked).
  [[noreturn]] void fail(int rc, const char* what) const;

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
  std::unordered_map<std::string, sqlite3_stmt*> cache_;
};

/// Runs `sql` within a transaction opened with `begin` ("BEGIN IMMEDIATE" or "BEGIN"); rolls
/// back unless commit() was called.
class Transaction {
 public:
  Transaction(Connection& c, const char* begin) : c_(c) { c_.exec(begin); }
  ~Transaction();
  void commit() {
    c_.exec("COMMIT");
    done_ = true;
  }

 private:
  Connection& c_;
  bool done_ = false;
};

/// Sleeps before retry number `attempt` (1, 2, ...) of a busy transaction: exponential
/// backoff from 1 ms to 50 ms with jitter.
void busy_backoff(int attempt);

/// Calls f() until it does not throw BusyError; after `deadline_ms` of retrying, a UserError
/// naming `path`. SQLite's own busy handler already waited inside each try; this loop covers
/// the cases where SQLite returns SQLITE_BUSY at once (a stale snapshot, WAL recovery).
template <class F>
auto retry_busy(const std::string& path, int deadline_ms, F&& f) -> decltype(f()) {
  auto start = std::chrono::steady_clock::now();
  bool told = false;
  for (int attempt = 1;; ++attempt) {
    try {
      return f();
    } catch (const BusyError& e) {
      auto waited = std::chrono::steady_clock::now() - start;
      if (waited > std::chrono::milliseconds(deadline_ms)) busy_give_up(path, deadline_ms, e);
      if (!told && waited > std::chrono::milliseconds(std::min(kBusyNoticeMs, deadline_ms / 2))) {
        busy_notice(path, deadline_ms);
        told = true;
      }
    }
    busy_backoff(attempt);
  }
}

}  // namespace tuner::db::sqlite
