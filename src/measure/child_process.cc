#include "measure/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "support/address_space.h"
#include "support/error.h"
#include "support/json.h"

extern char** environ;

namespace tuner::measure {

namespace {

// The parent's environment, plus settings that keep the child's address space predictable
// under RLIMIT_AS (glibc reserves 64 MiB of address space per malloc arena and thread).
std::vector<std::string> child_environment() {
  std::vector<std::string> env;
  bool has_arena = false;
  for (char** e = environ; e && *e; ++e) {
    env.emplace_back(*e);
    if (std::strncmp(*e, "MALLOC_ARENA_MAX=", 17) == 0) has_arena = true;
  }
  if (!has_arena) env.push_back(fmt::format("MALLOC_ARENA_MAX={}", kMallocArenasUnderLimit));
#if defined(__SANITIZE_ADDRESS__)
  // Under AddressSanitizer the child would report a crashing kernel and exit(1); keep the
  // signal, which is what the runner classifies. (Later settings win, so ours go last.)
  std::string asan = "ASAN_OPTIONS=";
  for (auto it = env.begin(); it != env.end(); ++it)
    if (it->rfind(asan, 0) == 0) {
      asan = *it + ":";
      env.erase(it);
      break;
    }
  env.push_back(asan + "handle_segv=0:handle_sigbus=0:handle_sigfpe=0:detect_leaks=0");
#endif
  return env;
}

}  // namespace

ChildProcess::ChildProcess(const std::string& exe, const std::vector<std::string>& args,
                           double start_timeout_s, bool quiet) {
  int sv[2];
  USER_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0)
      << "cannot create a socket pair for the measurement child: " << std::strerror(errno);
  // dup2(fd, fd) would keep close-on-exec set: make sure the child's end is not already fd 3.
  if (sv[1] == protocol::kChildFd) {
    int moved = fcntl(sv[1], F_DUPFD_CLOEXEC, 10);
    close(sv[1]);
    sv[1] = moved;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  if (quiet) posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, sv[1], protocol::kChildFd);
  // Descriptors the tuner opened without O_CLOEXEC (another thread's pipe to ld.lld, a
  // database) must not leak into a long-lived child, where they would never be closed.
  posix_spawn_file_actions_addclosefrom_np(&fa, protocol::kChildFd + 1);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  // Its own process group: a Ctrl-C at the terminal reaches only the tuner, which stops after
  // the round, instead of killing the candidate being measured (the child still exits when
  // the tuner closes its end of the socket).
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);

  std::vector<std::string> argv_s{exe};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_s = child_environment();
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);

  int rc = posix_spawn(&pid_, exe.c_str(), &fa, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(sv[1]);
  if (rc != 0) {
    close(sv[0]);
    pid_ = -1;
    USER_ERROR() << "cannot start the measurement child " << exe << ": " << std::strerror(rc);
  }
  fd_ = sv[0];

  std::string hello;
  auto st = receive(&hello, start_timeout_s);
  bool ready = false;
  if (st == protocol::ReadStatus::Ok) {
    Json j = Json::parse(hello, nullptr, /*allow_exceptions=*/false);
    ready = j.is_object() && j.value("ready", false);
  }
  if (!ready) {
    int status = kill_and_reap();
    close(fd_);
    fd_ = -1;
    USER_ERROR() << "the measurement child " << exe << " did not start ("
                 << (st == protocol::ReadStatus::Timeout ? "no answer" : describe_exit(status))
                 << ")";
  }
}

ChildProcess::~ChildProcess() {
  if (fd_ >= 0) close(fd_);
  kill_and_reap();
}

bool ChildProcess::send(const std::string& msg) { return protocol::write_frame(fd_, msg); }

protocol::ReadStatus ChildProcess::receive(std::string* msg, double timeout_s) {
  return protocol::read_frame(fd_, msg, timeout_s);
}

bool ChildProcess::alive() {
  if (reaped_ || pid_ < 0) return false;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    reaped_ = true;
    status_ = status;
    return false;
  }
  return true;
}

int ChildProcess::kill_and_reap() {
  if (reaped_ || pid_ < 0) return status_;
  kill(pid_, SIGKILL);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  status_ = status;
  return status_;
}

int ChildProcess::reap(double timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (alive()) {
    if (std::chrono::steady_clock::now() >= deadline) return kill_and_reap();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return status_;
}

bool is_executable(const std::string& p) { return !p.empty() && access(p.c_str(), X_OK) == 0; }

std::string find_child_executable(const std::string& name, const char* env_var,
                                  const std::string& build_tree_path) {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    std::string p = (self.parent_path() / name).string();
    if (is_executable(p)) return p;
  }
  if (const char* env = std::getenv(env_var); env && is_executable(env)) return env;
  if (is_executable(build_tree_path)) return build_tree_path;
  return "";
}

std::string locate_measure_child() {
  const char* name = "tuner-measure-child";
#ifdef TUNER_MEASURE_CHILD_PATH
  const std::string build_path = TUNER_MEASURE_CHILD_PATH;
#else
  const std::string build_path;
#endif
  std::string p = find_child_executable(name, "TUNER_MEASURE_CHILD", build_path);
  USER_CHECK(!p.empty()) << "cannot find " << name
                         << ": not next to the running executable, TUNER_MEASURE_CHILD is not set"
                         << (build_path.empty() ? ""
                                                : ", and the build-tree copy " + build_path +
                                                      " is missing");
  return p;
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status))
    return "killed by " + protocol::signal_description(WTERMSIG(status));
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  return "ended with wait status " + std::to_string(status);
}

}  // namespace tuner::measure
