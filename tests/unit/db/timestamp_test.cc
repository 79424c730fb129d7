#include "db/timestamp.h"

#include <gtest/gtest.h>

namespace tuner::db {

namespace fs = std::filesystem;

TEST(Timestamp, FormatsUtcWithMilliseconds) {
  EXPECT_EQ(format_time(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(format_time(1795318491123), "2026-11-22T03:34:51.123Z");
}

TEST(Timestamp, ParseInvertsFormat) {
  for (int64_t ms : {int64_t(0), int64_t(951782400999), int64_t(1795318491123), now_ms()})
    EXPECT_EQ(parse_time(format_time(ms)), ms);
}

TEST(Timestamp, RejectsMalformed) {
  EXPECT_FALSE(parse_time("2026-11-22T03:34:51Z"));
  EXPECT_FALSE(parse_time("2026-13-22T03:34:51.123Z"));
  EXPECT_FALSE(parse_time("2026-02-30T03:34:51.123Z"));
  EXPECT_FALSE(parse_time("2026-11-22 03:34:51.123Z"));
  EXPECT_FALSE(parse_time("+026-11-22T03:34:51.123Z"));
  EXPECT_FALSE(parse_time(""));
}

}  // namespace tuner::db
