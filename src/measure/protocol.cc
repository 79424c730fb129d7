#include "measure/protocol.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>

namespace tuner::measure::protocol {

namespace {

bool send_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= size_t(w);
  }
  return true;
}

// Reads exactly n bytes before `deadline` (time_point::max(): no limit).
ReadStatus recv_all(int fd, char* p, size_t n, std::chrono::steady_clock::time_point deadline) {
  using Clock = std::chrono::steady_clock;
  while (n > 0) {
    int wait_ms = -1;
    bool past = false;
    if (deadline != Clock::time_point::max()) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      // Past the deadline, what has arrived is still read: a process stopped (Ctrl-Z) while
      // its child answered finds the deadline gone when it continues.
      past = left.count() <= 0;
      wait_ms = past ? 0 : int(std::min<int64_t>(left.count() + 1, 1 << 30));
    }
    pollfd pfd{fd, POLLIN, 0};
    int rc = poll(&pfd, 1, wait_ms);
    if (rc < 0) {
      if (errno == EINTR) continue;
      return ReadStatus::Error;
    }
    if (rc == 0) {
      if (past) return ReadStatus::Timeout;
      continue;  // re-check the deadline
    }
    ssize_t r = recv(fd, p, n, 0);
    if (r == 0) return ReadStatus::Eof;
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return errno == ECONNRESET ? ReadStatus::Eof : ReadStatus::Error;
    }
    p += r;
    n -= size_t(r);
  }
  return ReadStatus::Ok;
}

}  // namespace

bool write_frame_raw(int fd, const char* data, uint32_t size) {
  unsigned char len[4] = {static_cast<unsigned char>(size), static_cast<unsigned char>(size >> 8),
                          static_cast<unsigned char>(size >> 16),
                          static_cast<unsigned char>(size >> 24)};
  return send_all(fd, reinterpret_cast<const char*>(len), 4) && send_all(fd, data, size);
}

bool write_frame(int fd, const std::string& payload) {
  if (payload.size() > kMaxFrame) return false;
  return write_frame_raw(fd, payload.data(), uint32_t(payload.size()));
}

ReadStatus read_frame(int fd, std::string* payload, double timeout_s) {
  using Clock = std::chrono::steady_clock;
  auto deadline = timeout_s < 0 ? Clock::time_point::max()
                                : Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                     std::chrono::duration<double>(timeout_s));
  unsigned char len[4];
  ReadStatus s = recv_all(fd, reinterpret_cast<char*>(len), 4, deadline);
  if (s != ReadStatus::Ok) return s;
  uint32_t n = uint32_t(len[0]) | uint32_t(len[1]) << 8 | uint32_t(len[2]) << 16 |
               uint32_t(len[3]) << 24;
  if (n > kMaxFrame) return ReadStatus::Error;
  payload->assign(n, '\0');
  return recv_all(fd, payload->data(), n, deadline);
}

std::string signal_description(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  const char* desc = sigdescr_np(sig);
  std::string s = abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
  if (desc) s += std::string(" (") + desc + ")";
  return s;
}

}  // namespace tuner::measure::protocol
