#include "cli/run_owner.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

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

// A killed tuner not yet reaped by its parent is a zombie: it tunes nothing, so its run is
// resumed (it was taken as alive: the rerun started a new run and left the killed one
// "running" for good).
TEST(RunOwner, AZombieIsNotAlive) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::string me = this_process().dump();
    (void)!write(fds[1], me.data(), me.size());
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char buf[256];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, size_t(n));
  close(fds[0]);
  Json owner = Json::parse(text);
  siginfo_t info{};
  ASSERT_EQ(waitid(P_PID, id_t(child), &info, WEXITED | WNOWAIT), 0);  // a zombie, not reaped
  EXPECT_FALSE(process_alive(owner)) << owner.dump();
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
}

}  // namespace tuner::cli
