// Schema versions and migrations.
#include "db/schema.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "db/sqlite_conn.h"
#include "db/sqlite_database.h"
#include "support/error.h"
#include "unit/db/db_test_util.h"

namespace tuner::db {

namespace fs = std::filesystem;

TEST(Schema, MigrationsEndAtTheCurrentVersion) {
  auto steps = migrations();
  ASSERT_FALSE(steps.empty());
  for (size_t i = 0; i < steps.size(); ++i) EXPECT_EQ(steps[i].version, int(i) + 1);
  EXPECT_EQ(steps.back().version, kSchemaVersion);
}

TEST(Schema, MigratesStepByStep) {
  test::TempDir dir;
  std::string path = dir.file("m.db");
  sqlite::Connection c(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 1000);
  std::vector<Migration> v1(migrations().begin(), migrations().end());
  EXPECT_EQ(migrate(c, v1), 0);               // a new file
  EXPECT_EQ(migrate(c, v1), kSchemaVersion);  // nothing to do
  // A later version adds a column; existing rows survive.
  c.exec("INSERT INTO targets (name, hardware, created) VALUES ('llvm', '{}', 1)");
  std::vector<Migration> v2 = v1;
  v2.push_back({kSchemaVersion + 1, "test: target notes",
                "ALTER TABLE targets ADD COLUMN notes TEXT NOT NULL DEFAULT '';"});
  EXPECT_EQ(migrate(c, v2), kSchemaVersion);
  EXPECT_EQ(c.column("PRAGMA user_version")[0], std::to_string(kSchemaVersion + 1));
  EXPECT_EQ(c.column("SELECT name || notes FROM targets")[0], "llvm");
  // ... and this tuner, which knows only v1, refuses the file.
  try {
    migrate(c, v1);
    FAIL() << "migrated a newer schema down";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("newer"), std::string::npos) << e.what();
  }
}

TEST(Schema, FailedMigrationLeavesTheOldVersion) {
  test::TempDir dir;
  std::string path = dir.file("m.db");
  sqlite::Connection c(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 1000);
  std::vector<Migration> steps(migrations().begin(), migrations().end());
  migrate(c, steps);
  steps.push_back({kSchemaVersion + 1, "test: broken", "CREATE TABLE x (a); SELECT nonsense("});
  EXPECT_THROW(migrate(c, steps), sqlite::SqliteError);
  EXPECT_EQ(c.column("PRAGMA user_version")[0], std::to_string(kSchemaVersion));
  EXPECT_EQ(c.column("SELECT count(*) FROM sqlite_master WHERE name = 'x'")[0], "0");
}

TEST(Schema, AnEmptySqliteFileBecomesATunerDatabase) {
  test::TempDir dir;
  std::string path = dir.file("empty.db");
  { sqlite::Connection c(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 1000); }
  auto db = SqliteDatabase::open(path);
  EXPECT_EQ(db->schema_version(), kSchemaVersion);
}

}  // namespace tuner::db
