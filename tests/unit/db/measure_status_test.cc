#include "db/measure_status.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace tuner::db {

namespace fs = std::filesystem;

TEST(MeasureStatus, NamesRoundTrip) {
  std::set<std::string> names;
  for (MeasureStatus s : kAllStatuses) {
    names.insert(status_name(s));
    ASSERT_EQ(parse_status(status_name(s)), s);
  }
  EXPECT_EQ(names.size(), kAllStatuses.size());
  EXPECT_STREQ(status_name(MeasureStatus::Ok), "ok");
  EXPECT_STREQ(status_name(MeasureStatus::CompileHost), "COMPILE_HOST");
  EXPECT_STREQ(status_name(MeasureStatus::RunTimeout), "RUN_TIMEOUT");
}

TEST(MeasureStatus, UnknownStringsAreRejected) {
  EXPECT_FALSE(parse_status("OK"));
  EXPECT_FALSE(parse_status("compile_host"));
  EXPECT_FALSE(parse_status(""));
}

}  // namespace tuner::db
