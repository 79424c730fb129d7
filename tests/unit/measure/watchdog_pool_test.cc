#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "measure/watchdog_pool.h"
#include "stopped_child.h"

namespace tuner::measure {

using namespace std::chrono_literals;

TEST(WatchdogPool, RunsEveryJobWithBoundedParallelism) {
  WatchdogPool pool(2);
  auto active = std::make_shared<std::atomic<int>>(0);
  auto peak = std::make_shared<std::atomic<int>>(0);
  std::vector<std::function<void()>> jobs;
  for (int i = 0; i < 8; ++i)
    jobs.push_back([active, peak] {
      int now = ++*active;
      for (int p = *peak; now > p && !peak->compare_exchange_weak(p, now);) {
      }
      std::this_thread::sleep_for(5ms);
      --*active;
    });
  auto ok = pool.run(std::move(jobs), std::vector<double>(8, 10.0));
  EXPECT_EQ(std::count(ok.begin(), ok.end(), true), 8);
  EXPECT_LE(peak->load(), 2);
}

TEST(WatchdogPool, AbandonsASlowJobAndGoesOn) {
  WatchdogPool pool(1);
  auto release = std::make_shared<std::atomic<bool>>(false);
  auto finished = std::make_shared<std::atomic<int>>(0);
  std::vector<std::function<void()>> jobs;
  jobs.push_back([release, finished] {
    while (!*release) std::this_thread::sleep_for(1ms);
    ++*finished;
  });
  jobs.push_back([finished] { ++*finished; });
  auto t0 = std::chrono::steady_clock::now();
  auto ok = pool.run(std::move(jobs), {0.05, 10.0});
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_FALSE(ok[0]);
  EXPECT_TRUE(ok[1]);  // the abandoned job does not hold its slot
  EXPECT_LT(waited, 5.0);
  EXPECT_EQ(pool.abandoned_running(), 1);
  *release = true;
  for (int i = 0; i < 2000 && pool.abandoned_running() > 0; ++i) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(pool.abandoned_running(), 0);
  EXPECT_EQ(finished->load(), 2);
}

TEST(WatchdogPool, TimeSpentStoppedDoesNotCount) {
  // Ctrl-Z during a tuning round used to time out every build in flight (BUILD_TIMEOUT
  // records). A job of 2 s of its own time with a 4 s limit is stopped for 5 s once it has
  // started: it finishes in time and ~5 s are reported stopped.
  int status = test::exit_status_of_stopped_child(
      [](const std::function<void()>& ready) {
        WatchdogPool pool(1);
        std::vector<std::function<void()>> jobs{[ready] {
          ready();
          for (int i = 0; i < 200; ++i) std::this_thread::sleep_for(10ms);
        }};
        std::vector<double> stopped;
        bool in_time = pool.run(std::move(jobs), {4.0}, &stopped)[0];
        return !in_time ? 1 : stopped[0] < 3.5 || stopped[0] > 8 ? 2 : 0;
      },
      5s);
  EXPECT_EQ(status, 0) << "1: the job was abandoned; 2: the stopped time is wrong";
}

TEST(WatchdogPool, SwallowsExceptionsOfJobs) {
  WatchdogPool pool(2);
  std::vector<std::function<void()>> jobs{[] { throw std::runtime_error("boom"); }, [] {}};
  auto ok = pool.run(std::move(jobs), {1.0, 1.0});
  EXPECT_TRUE(ok[0]);
  EXPECT_TRUE(ok[1]);
}

}  // namespace tuner::measure
