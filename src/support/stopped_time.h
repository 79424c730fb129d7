// Time a process spent stopped (Ctrl-Z, SIGSTOP) or starved, as a waiting thread sees it: it
// woke more than a second after it meant to. Timeouts do not count that time against the work
// they watch (builds, workers' heartbeats, leases).
#pragma once

#include <chrono>

namespace tuner {

/// How late a wait meant to end at `wake` ended at `now`, when over a second; else zero.
inline std::chrono::steady_clock::duration time_stopped(std::chrono::steady_clock::time_point wake,
                                                        std::chrono::steady_clock::time_point now) {
  return now - wake > std::chrono::seconds(1) ? now - wake
                                              : std::chrono::steady_clock::duration::zero();
}

}  // namespace tuner
