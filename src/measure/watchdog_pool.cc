#include "measure/watchdog_pool.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "support/error.h"
#include "support/log.h"
#include "support/stopped_time.h"

namespace tuner::measure {

namespace {

using Clock = std::chrono::steady_clock;
constexpr Clock::duration kTick = std::chrono::seconds(1);

// One job's state, shared between the pool's run() and the job's thread.
struct JobState {
  std::function<void()> fn;
  bool done = false;       // guarded by Shared::mu
  bool abandoned = false;  // guarded by Shared::mu
  Clock::time_point done_at;  // guarded by Shared::mu
};

}  // namespace

WatchdogPool::WatchdogPool(int threads)
    : threads_(std::max(1, threads)), shared_(std::make_shared<Shared>()) {}

WatchdogPool::~WatchdogPool() {
  std::unique_lock lk(shared_->mu);
  auto deadline = Clock::now() + std::chrono::duration<double>(abandon_wait_s_);
  if (!shared_->cv.wait_until(lk, deadline, [&] { return shared_->abandoned_running == 0; }))
    log(LogLevel::Info, "warning: {} abandoned build(s) still running at shutdown",
        shared_->abandoned_running);
}

int WatchdogPool::abandoned_running() const {
  std::lock_guard lk(shared_->mu);
  return shared_->abandoned_running;
}

std::vector<bool> WatchdogPool::run(std::vector<std::function<void()>> jobs,
                                    const std::vector<double>& timeouts_s,
                                    std::vector<double>* stopped_s) {
  INTERNAL_CHECK(timeouts_s.size() == jobs.size()) << "one timeout per job";
  size_t n = jobs.size();
  std::vector<bool> in_time(n, false);
  if (stopped_s) stopped_s->assign(n, 0.0);
  std::vector<std::shared_ptr<JobState>> state(n);
  std::vector<std::thread> threads(n);
  std::vector<Clock::time_point> deadline(n);
  std::vector<size_t> running;
  size_t next = 0;
  auto shared = shared_;

  std::unique_lock lk(shared->mu);
  while (next < n || !running.empty()) {
    while (running.size() < size_t(threads_) && next < n) {
      size_t i = next++;
      state[i] = std::make_shared<JobState>();
      state[i]->fn = std::move(jobs[i]);
      deadline[i] = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double>(timeouts_s[i]));
      threads[i] = std::thread([shared, st = state[i]] {
        try {
          st->fn();
        } catch (...) {
        }
        st->fn = nullptr;  // release what the job captured before reporting
        std::lock_guard g(shared->mu);
        st->done = true;
        st->done_at = Clock::now();
        if (st->abandoned) --shared->abandoned_running;
        shared->cv.notify_all();
      });
      running.push_back(i);
    }
    Clock::time_point earliest = Clock::time_point::max();
    for (size_t i : running) earliest = std::min(earliest, deadline[i]);
    // Wake at least every tick, so a stop (time_stopped) is seen. The jobs stopped with the
    // process get that time back, as build time not spent, and their deadlines a tick more
    // (the stop may have begun up to a tick before the missed wake).
    Clock::time_point wake = std::min(earliest, Clock::now() + kTick);
    shared->cv.wait_until(lk, wake, [&] {
      return std::any_of(running.begin(), running.end(), [&](size_t i) { return state[i]->done; });
    });
    auto now = Clock::now();
    if (auto lost = time_stopped(wake, now); lost > Clock::duration::zero()) {
      for (size_t i : running) {
        if (state[i]->done && state[i]->done_at < wake) continue;  // ended before the stop
        deadline[i] += lost + kTick;
        if (stopped_s) (*stopped_s)[i] += std::chrono::duration<double>(lost).count();
      }
    }
    std::vector<size_t> still;
    for (size_t i : running) {
      if (state[i]->done) {
        // The thread has set `done` and only has to release the lock and return.
        in_time[i] = true;
        lk.unlock();
        threads[i].join();
        lk.lock();
      } else if (now >= deadline[i]) {
        // Cannot be stopped safely (LLVM holds locks and heap state): let it finish alone.
        state[i]->abandoned = true;
        ++shared->abandoned_running;
        threads[i].detach();
      } else {
        still.push_back(i);
      }
    }
    running = std::move(still);
  }
  return in_time;
}

}  // namespace tuner::measure
