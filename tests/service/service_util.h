// Helpers of the service tests: processes that are always killed and reaped, free loopback
// ports, token files, polling with a deadline, and client stubs carrying a token.
#pragma once

#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <optional>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "measure/artifact.h"
#include "server/auth.h"
#include "tuner.grpc.pb.h"

extern char** environ;

namespace tuner::service_test {

/// A port on 127.0.0.1 that was free a moment ago.
inline int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  int port = ntohs(a.sin_port);
  close(fd);
  return port;
}

/// A child process (stdout and stderr to `log`; its TMPDIR `tmpdir` unless empty); SIGKILLed
/// and reaped when destroyed.
class Proc {
 public:
  Proc(const std::vector<std::string>& argv, const std::string& log,
       const std::string& tmpdir = "") {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    std::vector<char*> args;
    for (const auto& s : argv) args.push_back(const_cast<char*>(s.c_str()));
    args.push_back(nullptr);
    std::vector<std::string> env_strings;
    for (char** e = environ; *e; ++e)
      if (tmpdir.empty() || std::string_view(*e).substr(0, 7) != "TMPDIR=") env_strings.push_back(*e);
    if (!tmpdir.empty()) env_strings.push_back("TMPDIR=" + tmpdir);
    std::vector<char*> env;
    for (auto& e : env_strings) env.push_back(e.data());
    env.push_back(nullptr);
    if (posix_spawn(&pid_, args[0], &fa, nullptr, args.data(), env.data()) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&fa);
  }
  ~Proc() { kill_and_reap(); }
  Proc(const Proc&) = delete;
  Proc& operator=(const Proc&) = delete;

  pid_t pid() const { return pid_; }
  /// The wait status once the process has exited (see alive()).
  int status() const { return status_; }
  void signal(int sig) {
    if (pid_ > 0 && !reaped_) ::kill(pid_, sig);
  }
  /// True while the process has not exited.
  bool alive() {
    if (pid_ <= 0 || reaped_) return false;
    int st;
    if (waitpid(pid_, &st, WNOHANG) == pid_) {
      reaped_ = true;
      status_ = st;
      return false;
    }
    return true;
  }
  void kill_and_reap() {
    if (pid_ <= 0 || reaped_) return;
    ::kill(pid_, SIGCONT);
    ::kill(pid_, SIGKILL);
    waitpid(pid_, &status_, 0);
    reaped_ = true;
  }
  /// SIGTERM, then SIGKILL after timeout_s; returns the wait status.
  int terminate(double timeout_s = 10) {
    if (pid_ <= 0 || reaped_) return status_;
    ::kill(pid_, SIGTERM);
    for (double t = 0; t < timeout_s; t += 0.05) {
      if (!alive()) return status_;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    kill_and_reap();
    return status_;
  }

 private:
  pid_t pid_ = -1;
  int status_ = 0;
  bool reaped_ = false;
};

/// Polls `cond` every 50 ms until it holds or timeout_s passes; returns whether it held.
inline bool wait_until(const std::function<bool()>& cond, double timeout_s) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return cond();
}

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

/// A context carrying the token (none when empty) and a deadline.
inline std::unique_ptr<grpc::ClientContext> ctx(const std::string& token, double timeout_s = 10) {
  auto c = std::make_unique<grpc::ClientContext>();
  if (!token.empty()) server::add_token(*c, token);
  c->set_deadline(std::chrono::system_clock::now() +
                  std::chrono::milliseconds(int64_t(timeout_s * 1000)));
  return c;
}

inline std::shared_ptr<grpc::Channel> channel(int port) {
  return grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                             grpc::InsecureChannelCredentials());
}

inline const char* kClientToken = "client-secret-1";
inline const char* kWorkerToken = "worker-secret-2";

/// The job as the server lists it; nullopt when unknown or unreachable.
inline std::optional<rpc::JobInfo> job_info(rpc::TuningService::Stub& stub,
                                            const std::string& job) {
  rpc::ListJobsReply rep;
  if (!stub.List(ctx(kClientToken, 5).get(), {}, &rep).ok()) return std::nullopt;
  for (const auto& j : rep.jobs())
    if (j.job() == job) return j;
  return std::nullopt;
}

/// The server's workers (empty when unreachable).
inline std::vector<rpc::WorkerInfo> workers(rpc::TuningService::Stub& stub) {
  rpc::ListWorkersReply rep;
  if (!stub.ListWorkers(ctx(kClientToken, 5).get(), {}, &rep).ok()) return {};
  return {rep.workers().begin(), rep.workers().end()};
}


/// A scratch directory with the two token files.
struct Scratch {
  measure::TempDir dir{"tuner-service-test"};
  std::string client_token_file = dir.path() + "/client.token";
  std::string worker_token_file = dir.path() + "/worker.token";
  Scratch() {
    write_file(client_token_file, std::string(kClientToken) + "\n");
    write_file(worker_token_file, std::string(kWorkerToken) + "\n");
  }
  std::string path(const std::string& name) const { return dir.path() + "/" + name; }
  /// A process's own temporary directory (created): what it leaves there is visible to the
  /// test, and a killed process's leftovers go with the scratch directory.
  std::string tmp(const std::string& name) const {
    std::string p = path("tmp-" + name);
    std::filesystem::create_directories(p);
    return p;
  }
};

/// A tuner-worker process for 127.0.0.1:port (another architecture's target: emulated).
inline std::unique_ptr<Proc> start_worker(const Scratch& s, int port, const std::string& name,
                                          const std::string& target = "llvm",
                                          const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args{TUNER_WORKER_EXE, "--server", "127.0.0.1:" + std::to_string(port),
                                "--target=" + target, "--token-file", s.worker_token_file,
                                "--device-key", name, "--max-backoff", "0.5", "--min-repeat-ms",
                                "1", "--threads", "1",
                                // Warm: repeats of >= 1 ms keep a lease long enough for the
                                // fault tests to catch a worker holding one (cold calls of
                                // these tiny kernels finished the job before a second was seen).
                                "--measure", "warm"};
  args.insert(args.end(), extra.begin(), extra.end());
  return std::make_unique<Proc>(args, s.path(name + ".log"), s.tmp(name));
}

/// A tuner-server process on 127.0.0.1:port with a short heartbeat timeout.
inline std::unique_ptr<Proc> start_server(const Scratch& s, int port, const std::string& db,
                                          const std::string& log, double heartbeat_s = 1.5) {
  return std::make_unique<Proc>(
      std::vector<std::string>{TUNER_SERVER_EXE, "--listen",
                               "127.0.0.1:" + std::to_string(port), "--db", db,
                               "--client-token-file", s.client_token_file, "--worker-token-file",
                               s.worker_token_file, "--heartbeat-timeout",
                               std::to_string(heartbeat_s), "--lease-margin", "5",
                               "--kernel-timeout", "5", "--wait-for-workers", "30",
                               "--build-threads", "2"},
      s.path(log), s.tmp("server"));
}

/// Runs a shell command, returns (exit code, output with stderr).
inline std::pair<int, std::string> run(const std::string& cmd) {
  std::array<char, 4096> buf;
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  while (p && fgets(buf.data(), int(buf.size()), p)) out += buf.data();
  int st = p ? pclose(p) : -1;
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

}  // namespace tuner::service_test
