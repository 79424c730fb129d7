#include "db/sqlite_conn.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <thread>

#include "support/error.h"

namespace tuner::db::sqlite {

// ---- retries

void busy_give_up(const std::string& path, int deadline_ms, const BusyError& e) {
  USER_ERROR() << "tuning database '" << path << "' stayed locked by another process for "
               << deadline_ms / 1000.0 << " s (" << e.what() << ")";
}

void busy_notice(const std::string& path, int deadline_ms) {
  fmt::print(stderr, "note: tuning database '{}' is locked by another process; waiting up to {} s\n",
             path, deadline_ms / 1000.0);
}

void busy_backoff(int attempt) {
  thread_local std::minstd_rand rng(std::random_device{}());
  int cap = std::min(50, 1 << std::min(attempt, 6));
  std::uniform_int_distribution<int> us(cap * 500, cap * 1000);
  std::this_thread::sleep_for(std::chrono::microseconds(us(rng)));
}

// ---- Stmt

Stmt::~Stmt() {
  if (!s_) return;
  sqlite3_reset(s_);
  sqlite3_clear_bindings(s_);
}

Stmt& Stmt::bind(int i, int64_t v) {
  if (int rc = sqlite3_bind_int64(s_, i, v); rc != SQLITE_OK) conn_->fail(rc, "bind");
  return *this;
}

Stmt& Stmt::bind(int i, double v) {
  if (int rc = sqlite3_bind_double(s_, i, v); rc != SQLITE_OK) conn_->fail(rc, "bind");
  return *this;
}

Stmt& Stmt::bind(int i, std::string_view v) {
  int rc = sqlite3_bind_text64(s_, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK) conn_->fail(rc, "bind");
  return *this;
}

Stmt& Stmt::bind_blob(int i, std::string_view bytes) {
  int rc = sqlite3_bind_blob64(s_, i, bytes.data(), bytes.size(), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) conn_->fail(rc, "bind");
  return *this;
}

Stmt& Stmt::bind_null(int i) {
  if (int rc = sqlite3_bind_null(s_, i); rc != SQLITE_OK) conn_->fail(rc, "bind");
  return *this;
}

bool Stmt::step() {
  int rc = sqlite3_step(s_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  conn_->fail(rc, sqlite3_sql(s_));
}

bool Stmt::is_null(int col) const { return sqlite3_column_type(s_, col) == SQLITE_NULL; }
int64_t Stmt::i64(int col) const { return sqlite3_column_int64(s_, col); }
double Stmt::f64(int col) const { return sqlite3_column_double(s_, col); }

std::optional<double> Stmt::opt_f64(int col) const {
  if (is_null(col)) return std::nullopt;
  return f64(col);
}

std::optional<int64_t> Stmt::opt_i64(int col) const {
  if (is_null(col)) return std::nullopt;
  return i64(col);
}

std::string Stmt::text(int col) const {
  auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s_, col));
  return p ? std::string(p, size_t(sqlite3_column_bytes(s_, col))) : std::string();
}

std::string Stmt::blob(int col) const {
  auto* p = static_cast<const char*>(sqlite3_column_blob(s_, col));
  return p ? std::string(p, size_t(sqlite3_column_bytes(s_, col))) : std::string();
}

// ---- Connection

namespace {

// `path` as an SQLite URI that opens it immutable (no locks, no -shm or -wal files).
std::string immutable_uri(const std::string& path) {
  std::string uri = "file:";
  for (unsigned char c : std::filesystem::absolute(path).string()) {
    if (c == '%' || c == '?' || c == '#' || c < 0x20 || c >= 0x7f)
      uri += fmt::format("%{:02X}", c);
    else
      uri += char(c);
  }
  return uri + "?immutable=1";
}

// Whether a read-only open of a WAL database failed for want of its -shm file: the
// directory is not writable (a read-only mount, an image's database) and no writer left a WAL.
// SQLite says CANTOPEN where the directory refuses everyone (chattr +i), READONLY_DIRECTORY
// where its permissions refuse this user.
bool wal_unopenable_here(const std::string& path, int rc) {
  if ((rc & 0xff) != SQLITE_CANTOPEN && rc != SQLITE_READONLY_DIRECTORY) return false;
  std::error_code ec;
  if (std::filesystem::exists(path + "-wal", ec)) return false;
  std::filesystem::path dir = std::filesystem::absolute(path).parent_path();
  return access(dir.c_str(), W_OK) != 0 || !std::filesystem::exists(path + "-shm", ec);
}

// SQLite's message for an I/O or open error, with the system's reason ("disk I/O error" says
// nothing of a full disk or an exhausted address space).
std::string with_os_error(sqlite3* db, std::string msg, int rc) {
  int primary = rc & 0xff;
  int os = sqlite3_system_errno(db);
  if ((primary == SQLITE_IOERR || primary == SQLITE_CANTOPEN) && os != 0)
    msg += fmt::format(" ({})", std::strerror(os));
  return msg;
}

}  // namespace

Connection::Connection(const std::string& path, int flags, int busy_timeout_ms) : path_(path) {
  int rc = sqlite3_open_v2(path.c_str(), &db_, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  // A WAL database opens lazily: the first read needs the -shm file. A reader in a
  // directory it cannot write reads the file as immutable instead (no writer can be active
  // there without a -wal file).
  if (rc == SQLITE_OK && (flags & SQLITE_OPEN_READONLY)) {
    int probe = sqlite3_exec(db_, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr);
    if (probe != SQLITE_OK && wal_unopenable_here(path, sqlite3_extended_errcode(db_))) {
      sqlite3_close_v2(db_);
      db_ = nullptr;
      rc = sqlite3_open_v2(immutable_uri(path).c_str(), &db_,
                           flags | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI, nullptr);
    }
  }
  if (rc != SQLITE_OK) {
    std::string msg = db_ ? with_os_error(db_, sqlite3_errmsg(db_), rc) : sqlite3_errstr(rc);
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw SqliteError(rc, msg);
  }
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, busy_timeout_ms);
}

Connection::~Connection() {
  for (auto& [sql, s] : cache_) sqlite3_finalize(s);
  sqlite3_close_v2(db_);
}

void Connection::fail(int rc, const char* what) const {
  std::string msg = with_os_error(db_, sqlite3_errmsg(db_), rc);
  int primary = rc & 0xff;
  if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED) throw BusyError(rc, msg, what);
  throw SqliteError(rc, msg, what ? what : "");
}

void Connection::exec(const char* sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err);
  if (rc == SQLITE_OK) return;
  sqlite3_free(err);
  fail(rc, sql);
}

Stmt Connection::query(const std::string& sql) {
  auto it = cache_.find(sql);
  if (it == cache_.end()) {
    sqlite3_stmt* s = nullptr;
    int rc = sqlite3_prepare_v3(db_, sql.c_str(), int(sql.size()), SQLITE_PREPARE_PERSISTENT, &s,
                                nullptr);
    if (rc != SQLITE_OK) fail(rc, sql.c_str());
    it = cache_.emplace(sql, s).first;
  }
  return Stmt(*this, it->second);
}

std::vector<std::string> Connection::column(const char* sql) {
  std::vector<std::string> out;
  sqlite3_stmt* s = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql, -1, &s, nullptr);
  if (rc != SQLITE_OK) fail(rc, sql);
  std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> guard(s, sqlite3_finalize);
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    out.emplace_back(p ? p : "");
  }
  if (rc != SQLITE_DONE) fail(rc, sql);
  return out;
}

int64_t Connection::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }
bool Connection::file_moved() const {
  int moved = 0;
  return sqlite3_file_control(db_, "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK && moved;
}

int64_t Connection::changes() const { return sqlite3_changes64(db_); }

// ---- Transaction

Transaction::~Transaction() {
  if (done_) return;
  try {
    c_.exec("ROLLBACK");
  } catch (const SqliteError&) {
    // No transaction left to roll back (SQLite may have rolled it back itself).
  }
}

}  // namespace tuner::db::sqlite
