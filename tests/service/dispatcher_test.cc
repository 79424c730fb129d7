// The dispatcher's rules without a network: leases, idempotent reports, lost workers,
// expired leases, quarantine, bounded queue.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <thread>

#include "server/dispatcher.h"
#include "server/wire.h"
#include "service/service_util.h"
#include "stopped_child.h"

namespace tuner::server {
namespace {

Work work(const std::string& job, const std::string& cand) {
  static auto task = [] {
    auto t = std::make_shared<rpc::TaskPayload>();
    t->set_key("task-1");
    return t;
  }();
  Work w;
  w.job = job;
  w.target = "llvm";
  w.candidate = cand;
  w.symbol = "kernel";
  w.timeout_s = 0.2;
  w.task = task;
  w.artifact = std::make_shared<const std::string>("bytes of " + cand);
  return w;
}

measure::MeasureResult ok(double t) {
  measure::MeasureResult r;
  r.status = db::MeasureStatus::Ok;
  r.times = {t, t, t};
  return r;
}

DispatcherOptions fast() {
  DispatcherOptions o;
  o.heartbeat_timeout_s = 0.3;
  o.lease_margin_s = 0.2;
  o.prepare_allowance_s = 0;
  o.reap_interval_s = 0.02;
  return o;
}

TEST(Dispatcher, LeasesOnlyForTheTargetAndTaskSentOnce) {
  Dispatcher d(fast());
  std::string cuda = d.register_worker("cuda", "gpu", "", "");
  std::string w = d.register_worker("llvm", "cpu", "", "");
  auto f = d.submit({work("j", "a"), work("j", "b")});
  auto none = d.pull(cuda, 4, 0.05);
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
  auto l = d.pull(w, 4, 0.05);
  ASSERT_TRUE(l);
  ASSERT_EQ(l->size(), 2u);
  EXPECT_TRUE((*l)[0].has_task());   // first lease of the task carries its data
  EXPECT_FALSE((*l)[1].has_task());  // the worker has it now
  EXPECT_EQ((*l)[0].attempt(), 1);
  EXPECT_TRUE(d.report(w, "j", "a", 1, ok(1e-3)).accepted);
  EXPECT_TRUE(d.report(w, "j", "b", 1, ok(2e-3)).accepted);
  EXPECT_DOUBLE_EQ(f[0].get().median(), 1e-3);
  EXPECT_DOUBLE_EQ(f[1].get().median(), 2e-3);
}

TEST(Dispatcher, TaskMissingRequeuesAndResendsTheTask) {
  Dispatcher d(fast());
  std::string w = d.register_worker("llvm", "a", "", "");
  auto f = d.submit({work("j", "a"), work("j", "b")});
  auto l = d.pull(w, 2, 0.05);
  ASSERT_EQ(l->size(), 2u);
  EXPECT_FALSE((*l)[1].has_task());
  // The worker lost the task's data: no result, the candidate comes back with the data.
  EXPECT_FALSE(d.report(w, "j", "b", 1, {}, /*task_missing=*/true).accepted);
  auto again = d.pull(w, 1, 0.05);
  ASSERT_EQ(again->size(), 1u);
  EXPECT_EQ((*again)[0].candidate(), "b");
  EXPECT_EQ((*again)[0].attempt(), 2);
  EXPECT_TRUE((*again)[0].has_task());
  EXPECT_TRUE(d.report(w, "j", "b", 2, ok(1e-3)).accepted);
  EXPECT_TRUE(d.report(w, "j", "a", 1, ok(1e-3)).accepted);
  EXPECT_TRUE(f[1].get().ok());
}

// A worker that answers task_missing even to leases carrying the task (broken or hostile)
// gets strikes: the candidate ends quarantined instead of circling for ever.
TEST(Dispatcher, TaskMissingDespiteTheTaskIsAStrike) {
  Dispatcher d(fast());
  std::string w = d.register_worker("llvm", "a", "", "");
  auto f = d.submit({work("j", "a")});
  for (int attempt = 1; attempt <= 3; ++attempt) {
    auto l = d.pull(w, 1, 0.05);
    ASSERT_EQ(l->size(), 1u) << "attempt " << attempt;
    EXPECT_TRUE((*l)[0].has_task());
    EXPECT_FALSE(d.report(w, "j", "a", attempt, {}, /*task_missing=*/true).accepted);
  }
  ASSERT_EQ(f[0].wait_for(std::chrono::seconds(1)), std::future_status::ready);
  auto r = f[0].get();
  EXPECT_EQ(r.status, db::MeasureStatus::RuntimeDevice);
  EXPECT_NE(r.error.find("reported the task missing from a lease that carried it"), std::string::npos)
      << r.error;
  EXPECT_EQ(d.queued(), 0u);
}

TEST(Dispatcher, DuplicateAndForeignReportsAddNothing) {
  Dispatcher d(fast());
  std::string w1 = d.register_worker("llvm", "a", "", "");
  std::string w2 = d.register_worker("llvm", "b", "", "");
  auto f = d.submit({work("j", "a")});
  auto l = d.pull(w1, 1, 0.05);
  ASSERT_EQ(l->size(), 1u);
  EXPECT_FALSE(d.report(w2, "j", "a", 1, ok(5e-3)).accepted);  // not its lease
  EXPECT_FALSE(d.report(w1, "j", "a", 2, ok(5e-3)).accepted);  // not the current attempt
  EXPECT_TRUE(d.report(w1, "j", "a", 1, ok(1e-3)).accepted);
  EXPECT_FALSE(d.report(w1, "j", "a", 1, ok(9e-3)).accepted);  // duplicate
  EXPECT_DOUBLE_EQ(f[0].get().median(), 1e-3);
  int64_t total = 0;
  for (auto& v : d.workers()) total += v.measurements;
  EXPECT_EQ(total, 1);
}

TEST(Dispatcher, LostWorkerLeasesAreRequeuedAndLateReportIgnored) {
  Dispatcher d(fast());
  std::string w1 = d.register_worker("llvm", "a", "", "");
  auto f = d.submit({work("j", "a")});
  ASSERT_EQ(d.pull(w1, 1, 0.05)->size(), 1u);
  std::string w2 = d.register_worker("llvm", "b", "", "");
  // w1 goes silent; w2 keeps heartbeating and gets the candidate again as attempt 2.
  std::vector<rpc::Lease> again;
  ASSERT_TRUE(service_test::wait_until(
      [&] {
        d.heartbeat(w2);
        auto l = d.pull(w2, 1, 0.05);
        if (l && !l->empty()) again = *l;
        return !again.empty();
      },
      5));
  EXPECT_EQ(again[0].attempt(), 2);
  EXPECT_TRUE(again[0].has_task());  // w2 had never received the task
  EXPECT_FALSE(d.heartbeat(w1));     // lost: must register again
  auto late = d.report(w1, "j", "a", 1, ok(1e-3));
  EXPECT_FALSE(late.accepted);
  EXPECT_FALSE(late.known_worker);  // as for heartbeat: the worker registers again
  EXPECT_FALSE(d.deregister(w1));
  EXPECT_TRUE(d.report(w2, "j", "a", 2, ok(2e-3)).accepted);
  EXPECT_DOUBLE_EQ(f[0].get().median(), 2e-3);
  EXPECT_TRUE(d.deregister(w2));
  EXPECT_FALSE(d.deregister(w2));
  EXPECT_FALSE(d.report("no-such-worker", "j", "a", 2, ok(1e-3)).known_worker);
}

TEST(Dispatcher, CandidateThatTakesDownThreeWorkersIsQuarantined) {
  Dispatcher d(fast());
  auto f = d.submit({work("j", "killer")});
  for (int i = 0; i < 3; ++i) {
    std::string w = d.register_worker("llvm", "w" + std::to_string(i), "", "");
    auto l = d.pull(w, 1, 2);
    ASSERT_TRUE(l);
    ASSERT_EQ(l->size(), 1u) << "attempt " << i + 1;
    EXPECT_EQ((*l)[0].attempt(), i + 1);
    // The worker dies: no heartbeat, no report.
    ASSERT_TRUE(service_test::wait_until([&] { return d.alive_workers("llvm") == 0; }, 5));
  }
  ASSERT_EQ(f[0].wait_for(std::chrono::seconds(5)), std::future_status::ready);
  auto r = f[0].get();
  EXPECT_EQ(r.status, db::MeasureStatus::RuntimeDevice);
  EXPECT_NE(r.error.find("quarantined"), std::string::npos) << r.error;
}

TEST(Dispatcher, ExpiredLeaseIsRequeued) {
  Dispatcher d(fast());
  std::string w = d.register_worker("llvm", "a", "", "");
  auto f = d.submit({work("j", "slow")});
  ASSERT_EQ(d.pull(w, 1, 0.05)->size(), 1u);
  // Alive (heartbeats) but never reports: the lease (0.2 s + 0.2 s margin) expires.
  std::vector<rpc::Lease> again;
  ASSERT_TRUE(service_test::wait_until(
      [&] {
        d.heartbeat(w);
        auto l = d.pull(w, 1, 0.02);
        if (l && !l->empty()) again = *l;
        return !again.empty();
      },
      5));
  EXPECT_EQ(again[0].attempt(), 2);
  EXPECT_FALSE(d.report(w, "j", "slow", 1, ok(1e-3)).accepted);  // the expired lease
  EXPECT_TRUE(d.report(w, "j", "slow", 2, ok(3e-3)).accepted);
  EXPECT_DOUBLE_EQ(f[0].get().median(), 3e-3);
}

TEST(Dispatcher, TimeTheServerSpentStoppedIsNotTheWorkersSilence) {
  // A server stopped (SIGSTOP, Ctrl-Z) declared every worker lost and every lease expired
  // when it continued. A dispatcher with one worker and one lease (heartbeat timeout 2 s,
  // lease 2.2 s) is stopped for 4 s: at 5 s the worker is alive and its report accepted.
  int status = test::exit_status_of_stopped_child(
      [](const std::function<void()>& ready) {
        DispatcherOptions o = fast();
        o.heartbeat_timeout_s = 2;
        Dispatcher d(o);
        std::string w = d.register_worker("llvm", "a", "", "");
        Work one = work("j", "a");
        one.timeout_s = 2;
        auto f = d.submit({one});
        auto lease = d.pull(w, 1, 0.05);
        if (!lease || lease->size() != 1) return 3;
        auto t0 = std::chrono::steady_clock::now();
        ready();
        std::this_thread::sleep_until(t0 + std::chrono::seconds(5));
        if (!d.heartbeat(w)) return 1;
        return d.report(w, "j", "a", 1, ok(1e-3)).accepted ? 0 : 2;
      },
      std::chrono::seconds(4));
  EXPECT_EQ(status, 0) << "1: the worker was declared lost; 2: the lease had expired; 3: no lease";
}

TEST(Dispatcher, FullQueueRefusesAndSameCandidateShares) {
  DispatcherOptions o = fast();
  o.max_queue = 3;
  Dispatcher d(o);
  auto f = d.submit({work("j", "a"), work("j", "b")});
  auto same = d.submit({work("j", "a")});  // already queued: no new item
  EXPECT_EQ(d.queued(), 2u);
  EXPECT_THROW(d.submit({work("j", "c"), work("j", "d")}), QueueFull);
  EXPECT_EQ(d.queued(), 2u);  // all or nothing
  d.cancel_job("j");
  EXPECT_EQ(f[0].get().status, db::MeasureStatus::Unknown);
  // The artifact bytes are bounded too.
  DispatcherOptions ob = fast();
  ob.max_queue_bytes = 20;
  Dispatcher small(ob);
  small.submit({work("j", "a")});  // "bytes of a": 10 bytes
  EXPECT_THROW(small.submit({work("j", "bb"), work("j", "cc")}), QueueFull);
  EXPECT_NO_THROW(small.submit({work("j", "b")}));
  EXPECT_EQ(same[0].get().error, "cancelled");
  EXPECT_EQ(d.queued(), 0u);
  // A batch larger than the whole queue goes into an empty one (it waited for ever: a round
  // of 16 candidates at --max-queue 8), and then nothing more does.
  EXPECT_NO_THROW(d.submit({work("k", "a"), work("k", "b"), work("k", "c"), work("k", "d")}));
  EXPECT_EQ(d.queued(), 4u);
  EXPECT_THROW(d.submit({work("k", "e")}), QueueFull);
  d.cancel_job("k");
}

// A worker's result with times no record may hold (negative, NaN, infinite, 0) arrives as an
// error for that candidate: before, the round's commit failed and the job lost the round.
TEST(Wire, ResultsWithInvalidTimesBecomeErrors) {
  auto result = [](std::vector<double> times, double run_seconds = 0.1) {
    rpc::Result p;
    p.set_status("ok");
    for (double t : times) p.add_times(t);
    p.set_run_seconds(run_seconds);
    return from_proto(p);
  };
  EXPECT_TRUE(result({1e-3, 2e-3}).ok());
  double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  for (double bad : {-1.0, 0.0, inf, nan}) {
    auto r = result({1e-3, bad});
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status, db::MeasureStatus::Unknown) << bad;
    EXPECT_TRUE(r.times.empty()) << bad;
  }
  EXPECT_FALSE(result({1e-3}, -1).ok());
  EXPECT_FALSE(result({1e-3}, nan).ok());
  EXPECT_FALSE(result({}).ok());
}

}  // namespace
}  // namespace tuner::server
