#include "support/stop_signal.h"

#include <signal.h>

#include <atomic>

namespace tuner {

namespace {

std::atomic<int> g_signal{0};  // the stop signal received; lock-free, so safe in a handler
static_assert(std::atomic<int>::is_always_lock_free);
struct sigaction g_old_int, g_old_term;

void on_stop(int sig) { g_signal.store(sig); }

}  // namespace

StopSignals::StopSignals() {
  g_signal = 0;
  struct sigaction sa = {};
  sa.sa_handler = on_stop;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
}

StopSignals::~StopSignals() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
}

bool StopSignals::requested() { return g_signal.load() != 0; }

int StopSignals::exit_status() {
  int s = g_signal.load();
  return s ? 128 + s : 0;
}

}  // namespace tuner
