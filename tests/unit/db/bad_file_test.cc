// Acceptance (issue 5): a corrupt file, a truncated file, a file that is not a database and a
// database of a newer schema each give one clear UserError naming the file, in both open
// modes, and leave the file (and its directory) exactly as they were.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

#include <cstdlib>

#include "db/schema.h"
#include "db/sqlite_database.h"
#include "support/error.h"
#include "unit/db/db_test_util.h"

namespace tuner::db {

namespace fs = std::filesystem;

using test::kX86;
using test::read_bytes;
using test::write_bytes;

namespace {

// A closed, checkpointed database with some records.
std::string make_database(const test::TempDir& dir) {
  std::string path = dir.file("tuning.db");
  auto db = SqliteDatabase::open(path);
  for (int w = 0; w < 4; ++w) {
    int64_t id = db->commit_workload(test::test_workload(w));
    std::vector<Record> round;
    for (int i = 0; i < 100; ++i) round.push_back(test::test_record(id, kX86, 1e-3 * (i + 1), i));
    db->commit_round(round);
  }
  return path;
}

// Opens `path` in both modes; each must fail with a UserError whose one-line message names
// the file and contains `problem`; afterwards the bytes and the directory are unchanged.
void expect_refused(const std::string& path, const std::string& problem) {
  fs::path dir = fs::path(path).parent_path();
  std::string before = read_bytes(path);
  auto names = test::listing(dir);
  for (OpenMode mode : {OpenMode::ReadWrite, OpenMode::ReadOnly}) {
    try {
      SqliteDatabase::open(path, {.mode = mode});
      ADD_FAILURE() << "opened " << path;
    } catch (const UserError& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find(path), std::string::npos) << msg;
      EXPECT_NE(msg.find(problem), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
    EXPECT_TRUE(read_bytes(path) == before) << "the file changed";
    EXPECT_EQ(test::listing(dir), names) << "the directory changed";
  }
}

}  // namespace

TEST(BadFile, CorruptDatabase) {
  test::TempDir dir;
  std::string path = make_database(dir);
  std::string bytes = read_bytes(path);
  size_t pages = bytes.size() / 4096;
  ASSERT_GT(pages, 8u);
  // Garbage over a page in the middle of the records' b-tree.
  for (size_t i = 0; i < 4096; ++i) bytes[(pages / 2) * 4096 + i] = char(0xA5 ^ (i * 7));
  write_bytes(path, bytes);
  expect_refused(path, "is corrupt");
}

TEST(BadFile, CorruptSchemaPage) {
  test::TempDir dir;
  std::string path = make_database(dir);
  std::string bytes = read_bytes(path);
  for (size_t i = 100; i < 4096; ++i) bytes[i] = char(i * 13);  // page 1 after the header
  write_bytes(path, bytes);
  expect_refused(path, "is corrupt");
}

TEST(BadFile, TruncatedDatabase) {
  test::TempDir dir;
  std::string path = make_database(dir);
  std::string bytes = read_bytes(path);
  write_bytes(path, bytes.substr(0, bytes.size() / 2));
  expect_refused(path, "is truncated");
  write_bytes(path, bytes.substr(0, bytes.size() / 2 + 1000));  // not at a page boundary
  expect_refused(path, "is truncated");
  write_bytes(path, bytes.substr(0, 60));  // inside the header
  expect_refused(path, "is truncated");
}

TEST(BadFile, NotADatabase) {
  test::TempDir dir;
  std::string path = dir.file("tuning.db");
  write_bytes(path, "workload,target,median\nmatmul,llvm,0.001\n");
  expect_refused(path, "is not an SQLite database");
  std::string noise(10000, '\0');
  for (size_t i = 0; i < noise.size(); ++i) noise[i] = char(i * 2654435761u >> 13);
  write_bytes(path, noise);
  expect_refused(path, "is not an SQLite database");
}

TEST(BadFile, NewerSchemaVersion) {
  test::TempDir dir;
  std::string path = make_database(dir);
  std::string bytes = read_bytes(path);
  bytes[60] = bytes[61] = bytes[62] = 0;  // user_version (big-endian at offset 60)
  bytes[63] = char(kSchemaVersion + 1);
  write_bytes(path, bytes);
  expect_refused(path, "has schema version " + std::to_string(kSchemaVersion + 1) + ", newer");
}

// Tuner's tables and application id without a schema version: migrating from version 0
// would create the tables again ("already exists": an internal error before).
TEST(BadFile, SchemaVersionResetToZero) {
  test::TempDir dir;
  std::string path = make_database(dir);
  std::string bytes = read_bytes(path);
  bytes[60] = bytes[61] = bytes[62] = bytes[63] = 0;  // user_version
  write_bytes(path, bytes);
  expect_refused(path, "has Tuner's tables but no schema version");
}

TEST(BadFile, AnotherProgramsDatabase) {
  test::TempDir dir;
  std::string path = make_database(dir);
  std::string bytes = read_bytes(path);
  bytes[68] = 'A', bytes[69] = 'B', bytes[70] = 'C', bytes[71] = 'D';  // application_id
  write_bytes(path, bytes);
  expect_refused(path, "not a Tuner tuning database");
}

TEST(BadFile, ADirectory) {
  test::TempDir dir;
  fs::create_directory(dir.file("tuning.db"));
  EXPECT_THROW(SqliteDatabase::open(dir.file("tuning.db")), UserError);
}

// A database in a directory this process cannot write (a read-only mount, one shipped in an
// image): SQLite's WAL mode needs a -shm file beside it to read, so it is read as immutable;
// writing is refused with the reason.
TEST(BadFile, AReadOnlyDirectoryIsReadNotWritten) {
  test::TempDir dir;
  fs::create_directory(dir.file("ro"));
  std::string path = dir.file("ro/tuning.db");
  fs::copy_file(make_database(dir), path);
  // Root ignores permissions: the immutable attribute stands in for a read-only mount.
  bool root = geteuid() == 0;
  std::string lock = root ? "chattr +i '" + dir.file("ro") + "' 2>/dev/null"
                          : "chmod 555 '" + dir.file("ro") + "'";
  std::string unlock = root ? "chattr -i '" + dir.file("ro") + "'" : "chmod 755 '" + dir.file("ro") + "'";
  if (std::system(lock.c_str()) != 0)
    GTEST_SKIP() << "cannot make a directory read-only here (chattr +i failed)";
  try {
    auto db = SqliteDatabase::open(path, {.mode = OpenMode::ReadOnly});
    EXPECT_EQ(db->workloads().size(), 4u);
    EXPECT_EQ(db->stats().records, 400);
  } catch (const UserError& e) {
    ADD_FAILURE() << e.what();
  }
  try {
    SqliteDatabase::open(path);
    ADD_FAILURE() << "opened for writing in a read-only directory";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("its directory is not writable"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(std::system(unlock.c_str()), 0);
}

// The same for a directory whose permissions refuse this user (SQLite says
// READONLY_DIRECTORY, not CANTOPEN: the database could not be read at all). As root, the
// reader is a child running as nobody.
TEST(BadFile, ADirectoryThisUserCannotWriteIsRead) {
  test::TempDir dir;
  fs::create_directory(dir.file("ro"));
  std::string path = dir.file("ro/tuning.db");
  fs::copy_file(make_database(dir), path);
  fs::permissions(dir.path(), fs::perms::owner_all | fs::perms::others_exec | fs::perms::group_exec);
  fs::permissions(path, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  fs::permissions(dir.file("ro"), fs::perms::owner_read | fs::perms::owner_exec |
                                      fs::perms::group_read | fs::perms::group_exec |
                                      fs::perms::others_read | fs::perms::others_exec);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(2);
    try {
      auto db = SqliteDatabase::open(path, {.mode = OpenMode::ReadOnly});
      _exit(db->stats().records == 400 ? 0 : 3);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
      _exit(4);
    }
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  fs::permissions(dir.file("ro"), fs::perms::owner_all);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: cannot become nobody, 3: wrong count, 4: refused";
  EXPECT_FALSE(fs::exists(path + "-shm"));
}

TEST(BadFile, APathEndingInASlashCreatesNothing) {
  test::TempDir dir;
  EXPECT_THROW(SqliteDatabase::open(dir.file("logs/tuning.db/")), UserError);
  EXPECT_FALSE(fs::exists(dir.file("logs")));
}

TEST(BadFile, AGoodFileStillOpens) {
  test::TempDir dir;
  std::string path = make_database(dir);
  auto db = SqliteDatabase::open(path, {.mode = OpenMode::ReadOnly});
  EXPECT_EQ(db->count_records({}), 400);
}

}  // namespace tuner::db
