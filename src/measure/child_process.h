// One tuner-measure-child process on the parent's side: spawned with posix_spawn (never a
// fork of the multi-threaded tuner), talked to over a socketpair, killed and reaped by its
// owner. The destructor always kills and reaps, so no child outlives its ChildProcess, even
// when an exception unwinds through the runner.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "measure/protocol.h"

namespace tuner::measure {

class ChildProcess {
 public:
  /// Spawns `exe args...` with its end of the socket as fd 3, stdin and stdout (and stderr
  /// when quiet: an emulator's own crash reports) on /dev/null, and waits up to
  /// start_timeout_s for its ready message; throws UserError if it fails.
  ChildProcess(const std::string& exe, const std::vector<std::string>& args,
               double start_timeout_s = 10, bool quiet = false);
  /// Kills (SIGKILL) and reaps the child if it is still there.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  /// The child's process id.
  pid_t pid() const { return pid_; }
  /// Sends one message; false when the child is gone.
  bool send(const std::string& msg);
  /// Receives one message, waiting at most timeout_s.
  protocol::ReadStatus receive(std::string* msg, double timeout_s);
  /// True while the child runs; reaps it (without blocking) once it has exited.
  bool alive();
  /// Kills the child with SIGKILL (unless already reaped) and reaps it; returns its wait status.
  int kill_and_reap();
  /// Waits up to timeout_s for the child to exit by itself, then kills it; returns the status.
  int reap(double timeout_s);
  /// The wait status once reaped.
  int wait_status() const { return status_; }
  /// True once the child has been waited for.
  bool reaped() const { return reaped_; }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  int status_ = 0;
  bool reaped_ = false;
};

/// Whether `path` names a file this process may execute.
bool is_executable(const std::string& path);

/// Path of a child executable: `name` next to the running executable, else $env_var, else
/// build_tree_path; empty when none of them is executable.
std::string find_child_executable(const std::string& name, const char* env_var,
                                  const std::string& build_tree_path);

/// Path of the tuner-measure-child executable: next to the running executable, else
/// $TUNER_MEASURE_CHILD, else the build-tree path compiled in. Throws UserError if none exists.
std::string locate_measure_child();

/// How a child ended, from its wait status: "killed by SIGSEGV (Segmentation fault)",
/// "exited with code 3".
std::string describe_exit(int wait_status);

}  // namespace tuner::measure
