// The SQLite connection's errors.
#include "db/sqlite_conn.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>

#include "unit/db/db_test_util.h"

namespace tuner::db {

TEST(SqliteConnection, AnOpenOrIoErrorNamesTheSystemsReason) {
  // SQLite alone says "unable to open database file" or "disk I/O error", the same for a
  // missing folder, a full disk or an exhausted address space.
  test::TempDir dir;
  std::string path = dir.file("no-such-folder/t.db");
  try {
    sqlite::Connection c(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 1000);
    FAIL() << "opened " << path;
  } catch (const sqlite::SqliteError& e) {
    EXPECT_EQ(e.primary(), SQLITE_CANTOPEN);
    EXPECT_NE(std::string(e.what()).find("(No such file or directory)"), std::string::npos)
        << e.what();
  }
}

}  // namespace tuner::db
