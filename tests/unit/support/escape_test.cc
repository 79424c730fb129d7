#include "support/escape.h"

#include <gtest/gtest.h>

#include "support/error.h"
#include "support/log.h"

namespace tuner {
namespace {

TEST(Escape, ControlCharactersBecomeHexEscapes) {
  EXPECT_EQ(escape_controls(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(escape_controls("\x1b[2J\x7f"), "\\x1b[2J\\x7f");
  EXPECT_EQ(escape_controls("a\nb\tc"), "a\\x0ab\\x09c");
  EXPECT_EQ(escape_controls("a\nb\tc", /*keep_layout=*/true), "a\nb\tc");
}

TEST(Escape, Utf8C1ControlsAreEscapedOtherTextKept) {
  EXPECT_EQ(escape_controls("x\xc2\x9b" "2Jy"), "x\\u009b2Jy");  // CSI
  EXPECT_EQ(escape_controls("\xc2\x80"), "\\u0080");
  EXPECT_EQ(escape_controls("caf\xc3\xa9 \xc2\xa0 \xe2\x82\xac"), "caf\xc3\xa9 \xc2\xa0 \xe2\x82\xac");
  EXPECT_EQ(escape_controls("\xc2"), "\xc2");  // a cut sequence stays as it is
}

TEST(Escape, FirstCharsNeverSplitsACharacter) {
  EXPECT_EQ(first_chars("abcdef", 3), "abc");
  EXPECT_EQ(first_chars("ab", 3), "ab");
  EXPECT_EQ(first_chars("caf\xc3\xa9s", 4), "caf\xc3\xa9");  // 5 bytes, 4 characters
  EXPECT_EQ(first_chars("\xe2\x82\xac\xe2\x82\xac", 1), "\xe2\x82\xac");
  // Cut before escaping: a C1 control at the cut is escaped whole or not at all.
  EXPECT_EQ(escape_controls(first_chars("ab\xc2\x9b" "c", 3)), "ab\\u009b");
  EXPECT_EQ(escape_controls(first_chars("ab\xc2\x9b" "c", 2)), "ab");
}

TEST(Escape, IsIdempotent) {
  std::string once = escape_controls(std::string("\0\x1b\xc2\x9b\n", 6));
  EXPECT_EQ(escape_controls(once), once);
}

TEST(Escape, UserErrorEscapesItsMessage) {
  UserError e("bad name 'a\x1b" "b'\nsecond line");
  EXPECT_STREQ(e.what(), "bad name 'a\\x1bb'\nsecond line");
  InternalError bug(std::string("stage 'a\0b'", 11));
  EXPECT_STREQ(bug.what(), "stage 'a\\x00b'");
}

}  // namespace
}  // namespace tuner

namespace tuner {
namespace {

// A worker's device key or a model's name inside a server log line cannot forge another line
// or reach the operator's terminal as escape sequences.
TEST(Log, EscapesControlCharactersOfItsArguments) {
  LogLevel saved = log_level();
  log_level() = LogLevel::Info;
  ::testing::internal::CaptureStderr();
  log(LogLevel::Info, "worker {} registered", "w1\nworker w2 lost\x1b[2J");
  std::string out = ::testing::internal::GetCapturedStderr();
  log_level() = saved;
  EXPECT_EQ(out, "worker w1\\x0aworker w2 lost\\x1b[2J registered\n");
}

}  // namespace
}  // namespace tuner
