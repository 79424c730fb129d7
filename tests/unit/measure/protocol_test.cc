#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>

#include "measure/protocol.h"

namespace tuner::measure::protocol {

TEST(Protocol, FramesRoundTripAndTimeOut) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  std::string big(100000, 'x');
  ASSERT_TRUE(write_frame(sv[0], "{\"a\":1}"));
  ASSERT_TRUE(write_frame(sv[0], ""));
  std::string got;
  EXPECT_EQ(read_frame(sv[1], &got, 1.0), ReadStatus::Ok);
  EXPECT_EQ(got, "{\"a\":1}");
  EXPECT_EQ(read_frame(sv[1], &got, 1.0), ReadStatus::Ok);
  EXPECT_EQ(got, "");
  EXPECT_EQ(read_frame(sv[1], &got, 0.02), ReadStatus::Timeout);
  close(sv[0]);
  EXPECT_EQ(read_frame(sv[1], &got, 1.0), ReadStatus::Eof);
  // Writing to a closed peer fails with an error code, not SIGPIPE.
  EXPECT_FALSE(write_frame(sv[1], big));
  close(sv[1]);
}

TEST(Protocol, AFrameThatHasArrivedIsReadPastTheDeadline) {
  // A process stopped (Ctrl-Z) while its child answered continues with no time left.
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  ASSERT_TRUE(write_frame(sv[0], "{\"ok\":1}"));
  std::string got;
  EXPECT_EQ(read_frame(sv[1], &got, 0.0), ReadStatus::Ok);
  EXPECT_EQ(got, "{\"ok\":1}");
  EXPECT_EQ(read_frame(sv[1], &got, 0.0), ReadStatus::Timeout);
  close(sv[0]);
  close(sv[1]);
}

TEST(Protocol, SignalDescriptions) {
  EXPECT_EQ(signal_description(SIGSEGV).rfind("SIGSEGV (", 0), 0u);
  EXPECT_EQ(signal_description(SIGKILL).rfind("SIGKILL", 0), 0u);
}

}  // namespace tuner::measure::protocol
