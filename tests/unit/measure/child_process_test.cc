#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>

#include "measure/child_process.h"
#include "support/error.h"
#include "unit/measure/measure_test_util.h"

namespace tuner::measure {

TEST(ChildProcess, LocatesTheChildExecutable) {
  std::string p = locate_measure_child();
  EXPECT_NE(p.find("tuner-measure-child"), std::string::npos);
}

TEST(ChildProcess, StartsAndIsReapedByItsDestructor) {
  {
    ChildProcess c(locate_measure_child(), {"--fd", "3"});
    EXPECT_TRUE(c.alive());
    EXPECT_EQ(test::child_pids().size(), 1u);
    // An unknown command is an error reply, and the child stays up.
    ASSERT_TRUE(c.send(R"({"cmd":"nope","task":{"id":"x","inputs":[],"outputs":[]}})"));
    std::string reply;
    ASSERT_EQ(c.receive(&reply, 5.0), protocol::ReadStatus::Ok);
    EXPECT_EQ(reply, R"({"ack":true})");
    ASSERT_EQ(c.receive(&reply, 5.0), protocol::ReadStatus::Ok);
    EXPECT_NE(reply.find("UNKNOWN"), std::string::npos) << reply;
    EXPECT_TRUE(c.alive());
  }
  EXPECT_TRUE(test::child_pids().empty());
}

TEST(ChildProcess, ExecutableThatIsNotAChildFailsClearly) {
  EXPECT_THROW(ChildProcess("/bin/true", {}, 2.0), UserError);
  EXPECT_THROW(ChildProcess("/nonexistent/child", {}, 2.0), UserError);
  EXPECT_TRUE(test::child_pids().empty());
}

TEST(ChildProcess, DescribesExits) {
  EXPECT_EQ(describe_exit(3 << 8), "exited with code 3");
  EXPECT_EQ(describe_exit(SIGSEGV).rfind("killed by SIGSEGV", 0), 0u);
}

}  // namespace tuner::measure
