// SqliteDatabase specifics: the file, its pragmas, read-only opening, verify, threads.
#include "db/sqlite_database.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <thread>

#include "db/schema.h"
#include "support/error.h"
#include "unit/db/db_test_util.h"

namespace tuner::db {

namespace fs = std::filesystem;

using test::kX86;
using test::test_record;
using test::test_workload;

namespace {
// Runs `sql` on a plain SQLite connection; returns the first column of the first row.
std::string raw_sql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  std::string out;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr), SQLITE_OK) << sql;
  if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
    out = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
  sqlite3_finalize(s);
  sqlite3_close(db);
  return out;
}
}  // namespace

TEST(SqliteDatabase, CreatesDirectoryAndPersists) {
  test::TempDir dir;
  std::string path = dir.file("nested/logs/tuning.db");
  int64_t w, rec;
  {
    auto db = SqliteDatabase::open(path);
    EXPECT_EQ(db->schema_version(), kSchemaVersion);
    w = db->commit_workload(test_workload(0));
    rec = db->commit_round(std::vector<Record>{test_record(w, kX86, 1e-3, 0)}).ids[0];
  }
  EXPECT_FALSE(fs::exists(path + "-wal"));  // the last connection checkpointed
  auto db = SqliteDatabase::open(path, {.mode = OpenMode::ReadOnly});
  EXPECT_EQ(db->workloads().size(), 1u);
  EXPECT_EQ(db->record(rec)->workload_id, w);
}

// A database file deleted or replaced while open: SQLite would write on into the unlinked
// file and every record would be lost in silence; writing is refused, naming the file.
TEST(SqliteDatabase, AFileDeletedOrReplacedWhileOpenIsNotWrittenInto) {
  test::TempDir dir;
  std::string path = dir.file("tuning.db");
  for (bool replace : {false, true}) {
    auto db = SqliteDatabase::open(path);
    int64_t w = db->commit_workload(test_workload(0));
    fs::remove(path);
    if (replace) SqliteDatabase::open(path);  // a new database at the same path
    try {
      db->commit_round(std::vector<Record>{test_record(w, kX86, 1e-3, 0)});
      ADD_FAILURE() << "wrote into a deleted database (replaced: " << replace << ")";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("tuning database '" + path + "' was deleted or replaced"),
                std::string::npos)
          << e.what();
    }
    db.reset();
    fs::remove(path);
  }
}

// A database moved while a tuner writes (found by an adversarial test, session 54): what was
// committed before is all in the moved file, and a database put at the old path afterwards
// is not corrupted by the WAL left there (SQLite does not checkpoint a moved file on close).
TEST(SqliteDatabase, AFileMovedWhileOpenKeepsWhatWasCommitted) {
  test::TempDir dir;
  std::string path = dir.file("tuning.db"), moved = dir.file("moved.db");
  std::string other = dir.file("other.db");
  {
    auto db = SqliteDatabase::open(other);
    db->commit_round(
        std::vector<Record>{test_record(db->commit_workload(test_workload(1)), kX86, 2e-3, 9)});
  }
  {
    auto db = SqliteDatabase::open(path);
    int64_t w = db->commit_workload(test_workload(0));
    for (int i = 0; i < 20; ++i)
      db->commit_round(std::vector<Record>{test_record(w, kX86, 1e-3, i)});
    fs::rename(path, moved);
    EXPECT_THROW(db->commit_round(std::vector<Record>{test_record(w, kX86, 1e-3, 99)}), UserError);
    fs::copy_file(other, path);
  }
  auto db = SqliteDatabase::open(moved, {.mode = OpenMode::ReadOnly});
  EXPECT_EQ(db->count_records({}), 20);
  auto fresh = SqliteDatabase::open(path, {.mode = OpenMode::ReadOnly});
  EXPECT_EQ(fresh->count_records({}), 1);
}

TEST(SqliteDatabase, UsesWalAndMarksTheFile) {
  test::TempDir dir;
  std::string path = dir.file("t.db");
  SqliteDatabase::open(path);
  EXPECT_EQ(raw_sql(path, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(raw_sql(path, "PRAGMA application_id"), std::to_string(kApplicationId));
  EXPECT_EQ(raw_sql(path, "PRAGMA user_version"), std::to_string(kSchemaVersion));
}

// A writer waiting for a lock another process holds says so once, then gives up at its
// deadline with one error naming the database (a locked database waited silently for 60 s).
TEST(SqliteDatabase, ALockHeldTooLongIsToldThenRefused) {
  test::TempDir dir;
  std::string path = dir.file("t.db");
  auto db = SqliteDatabase::open(path, {.busy_timeout_ms = 50, .busy_deadline_ms = 600});
  int64_t w = db->commit_workload(test_workload(0));
  sqlite3* holder = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &holder, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(holder, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  testing::internal::CaptureStderr();
  try {
    db->commit_round(std::vector<Record>{test_record(w, kX86, 1e-3, 0)});
    ADD_FAILURE() << "committed under another process's exclusive lock";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("stayed locked by another process"), std::string::npos)
        << e.what();
  }
  std::string told = testing::internal::GetCapturedStderr();
  EXPECT_EQ(told, "note: tuning database '" + path +
                      "' is locked by another process; waiting up to 0.6 s\n");
  sqlite3_exec(holder, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(holder);
  db->commit_round(std::vector<Record>{test_record(w, kX86, 1e-3, 0)});  // free again
  EXPECT_EQ(db->stats().records, 1);
}

TEST(SqliteDatabase, ReadOnlyNeedsAFileAndRefusesWrites) {
  test::TempDir dir;
  std::string path = dir.file("missing.db");
  try {
    SqliteDatabase::open(path, {.mode = OpenMode::ReadOnly});
    FAIL() << "opened a missing file read-only";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(path));
  SqliteDatabase::open(path);
  auto db = SqliteDatabase::open(path, {.mode = OpenMode::ReadOnly});
  EXPECT_THROW(db->commit_workload(test_workload(0)), InternalError);
  EXPECT_EQ(db->count_records({}), 0);
}

TEST(SqliteDatabase, RefusesRecordsWithBrokenStoredRows) {
  test::TempDir dir;
  std::string path = dir.file("t.db");
  auto db = SqliteDatabase::open(path);
  int64_t w = db->commit_workload(test_workload(0));
  db->commit_round(std::vector<Record>{test_record(w, kX86, 1e-3, 0)});
  // The schema itself refuses an ok record without a median and unknown statuses.
  EXPECT_EQ(raw_sql(path, "UPDATE records SET median = NULL RETURNING id"), "");
  EXPECT_EQ(raw_sql(path, "UPDATE records SET status = 'BAD' RETURNING id"), "");
  EXPECT_EQ(db->top_k(w, kX86, 1).size(), 1u);
}

TEST(SqliteDatabase, VerifyFindsTampering) {
  test::TempDir dir;
  std::string path = dir.file("t.db");
  int64_t w;
  {
    auto db = SqliteDatabase::open(path);
    w = db->commit_workload(test_workload(0));
    db->commit_workload(test_workload(1));
    std::vector<Record> round;
    for (int i = 0; i < 20; ++i) round.push_back(test_record(w, kX86, 1e-3 * (i + 1), i));
    db->commit_round(round);
    VerifyReport rep = db->verify();
    EXPECT_TRUE(rep.ok()) << rep.problems.front();
    EXPECT_EQ(rep.workloads, 2);
    EXPECT_EQ(rep.records, 20);
  }
  raw_sql(path, "UPDATE workloads SET canonical = canonical || ' ' WHERE id = 2");
  raw_sql(path, "UPDATE records SET median = 5 WHERE id = 3");
  raw_sql(path, "UPDATE records SET worker = 'forged' WHERE id = 4");
  raw_sql(path, "UPDATE records SET times = 'not json' WHERE id = 5");
  auto db = SqliteDatabase::open(path);
  VerifyReport rep = db->verify();
  ASSERT_EQ(rep.problems.size(), 4u);
  EXPECT_NE(rep.problems[0].find("workload 2"), std::string::npos) << rep.problems[0];
  EXPECT_NE(rep.problems[1].find("record 3: median"), std::string::npos) << rep.problems[1];
  EXPECT_NE(rep.problems[2].find("record 4: content key"), std::string::npos);
  EXPECT_NE(rep.problems[3].find("record 5: cannot be read"), std::string::npos);
}

TEST(SqliteDatabase, ThreadsShareOneDatabase) {
  test::TempDir dir;
  auto db = SqliteDatabase::open(dir.file("t.db"));
  int64_t w = db->commit_workload(test_workload(0));
  std::thread writer([&] {
    for (int round = 0; round < 20; ++round) {
      std::vector<Record> rs;
      for (int i = 0; i < 10; ++i) rs.push_back(test_record(w, kX86, 1e-3, round * 10 + i));
      db->commit_round(rs);
    }
  });
  int64_t seen = 0;
  while (seen < 200) {
    seen = db->count_records({});
    ASSERT_EQ(seen % 10, 0);
  }
  writer.join();
  EXPECT_EQ(db->top_k(w, kX86, 1000).size(), 200u);
}

TEST(SqliteDatabase, TwoWritersInterleave) {
  test::TempDir dir;
  std::string path = dir.file("t.db");
  auto a = SqliteDatabase::open(path);
  auto b = SqliteDatabase::open(path);
  int64_t w = a->commit_workload(test_workload(0));
  EXPECT_EQ(b->commit_workload(test_workload(0)), w);
  std::thread t([&] {
    for (int i = 0; i < 50; ++i) a->commit_round(std::vector<Record>{test_record(w, kX86, 1, i)});
  });
  for (int i = 0; i < 50; ++i)
    b->commit_round(std::vector<Record>{test_record(w, kX86, 1, 100 + i)});
  t.join();
  EXPECT_EQ(a->count_records({}), 100);
}

}  // namespace tuner::db
