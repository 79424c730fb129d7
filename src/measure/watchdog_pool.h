// Runs jobs on threads with a per-job time limit. A job that overruns is *abandoned*, not
// killed: its thread is detached and left to finish in the background, and its result is
// ignored. This is the builder's timeout mechanism (see builder.h for why not a child process).
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace tuner::measure {

class WatchdogPool {
 public:
  /// At most `threads` jobs run at once (abandoned ones do not count).
  explicit WatchdogPool(int threads);
  /// Waits up to `abandon_wait_s` for abandoned jobs still running, so none outlives the
  /// objects it uses at process exit (builds always finish; a timeout only means "too slow").
  ~WatchdogPool();
  WatchdogPool(const WatchdogPool&) = delete;
  WatchdogPool& operator=(const WatchdogPool&) = delete;

  /// Runs every job; job i is abandoned once it has run timeouts_s[i] seconds, time the
  /// process spent stopped (Ctrl-Z, SIGSTOP; seen when over a second) not counted: that time
  /// goes to (*stopped_s)[i], and a second more to the deadline.
  /// Returns, per job, whether it finished in time. Jobs must own (or share) everything they
  /// touch, since an abandoned one outlives this call; an exception escaping a job is swallowed.
  std::vector<bool> run(std::vector<std::function<void()>> jobs,
                        const std::vector<double>& timeouts_s,
                        std::vector<double>* stopped_s = nullptr);

  /// Abandoned jobs that have not finished yet.
  int abandoned_running() const;
  /// Jobs run at once.
  int threads() const { return threads_; }
  /// Seconds the destructor waits for abandoned jobs (default 120).
  void set_abandon_wait(double seconds) { abandon_wait_s_ = seconds; }

 private:
  // Shared with abandoned threads, which may outlive the pool.
  struct Shared {
    std::mutex mu;
    std::condition_variable cv;
    int abandoned_running = 0;
  };
  int threads_;
  double abandon_wait_s_ = 120;
  std::shared_ptr<Shared> shared_;
};

}  // namespace tuner::measure
