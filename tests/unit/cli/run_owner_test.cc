#include "cli/run_owner.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

namespace tuner::cli {

TEST(RunOwner, ThisProcessIsAliveAndOthersAreNot) {
  Json me = this_process();
  EXPECT_TRUE(process_alive(me)) << me.dump();
  Json reused = me;  // the same pid started at another time: not the owner
  reused["start"] = me["start"].get<long long>() + 1;
  EXPECT_FALSE(process_alive(reused));
  Json elsewhere = me;
  elsewhere["host"] = "another-machine";
  EXPECT_FALSE(process_alive(elsewhere));
  for (Json bad : {Json(), Json("x"), Json::object(), Json{{"host", me["host"]}, {"pid", "1"}},
                   Json{{"host", me["host"]}, {"pid", -1}, {"start", 0}}})
    EXPECT_FALSE(process_alive(bad)) << bad.dump();
  // A process that has exited.
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  Json gone = me;
  gone["pid"] = child;
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  EXPECT_FALSE(process_alive(gone));
}

}  // namespace tuner::cli
