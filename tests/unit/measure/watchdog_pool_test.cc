#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "measure/watchdog_pool.h"

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

TEST(WatchdogPool, SwallowsExceptionsOfJobs) {
  WatchdogPool pool(2);
  std::vector<std::function<void()>> jobs{[] { throw std::runtime_error("boom"); }, [] {}};
  auto ok = pool.run(std::move(jobs), {1.0, 1.0});
  EXPECT_TRUE(ok[0]);
  EXPECT_TRUE(ok[1]);
}

}  // namespace tuner::measure
