// A forked child that the test stops (SIGSTOP) for a while once the child says it is ready,
// then continues: how tests check that time spent stopped (Ctrl-Z) is not counted.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <thread>

namespace tuner::test {

/// Forks; the child runs body(ready) and exits with what it returns (5 if it throws), calling
/// ready() where it wants to be stopped. The parent then waits 200 ms, stops the child for
/// `stop` and continues it. Returns the child's exit status, -1 if it did not exit normally.
inline int exit_status_of_stopped_child(
    const std::function<int(const std::function<void()>& ready)>& body,
    std::chrono::milliseconds stop) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    close(fds[0]);
    int code = 5;
    try {
      code = body([fd = fds[1]] {
        char c = 1;
        if (write(fd, &c, 1) != 1) _exit(4);
      });
    } catch (...) {
    }
    _exit(code);
  }
  close(fds[1]);
  char c = 0;
  // No byte: the child ended before it was ready; its status says why.
  if (read(fds[0], &c, 1) == 1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    kill(pid, SIGSTOP);
    std::this_thread::sleep_for(stop);
    kill(pid, SIGCONT);
  }
  close(fds[0]);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace tuner::test
