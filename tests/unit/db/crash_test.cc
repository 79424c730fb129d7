// Acceptance (issue 5): a writer killed with SIGKILL at random moments, 50 times. After each
// kill the database opens, PRAGMA integrity_check is ok, and every round is either wholly
// present or wholly absent (and the present rounds are exactly the first R).
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <thread>

#include "db/sqlite_database.h"
#include "unit/db/db_test_util.h"

namespace tuner::db {

namespace fs = std::filesystem;

namespace {

constexpr int kRecordsPerCommit = 64;
constexpr int kKills = 50;

// Commits rounds forever, continuing from the rounds already present. Round r's records all
// have worker "round-r". Writes a byte to `committed_fd` after each commit.
[[noreturn]] void endless_writer(const std::string& path, int seed, int committed_fd) {
  auto db = SqliteDatabase::open(path);
  int64_t r = db->count_records({}) / kRecordsPerCommit;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> t(1e-5, 1e-2);
  for (;; ++r) {
    std::vector<Record> round;
    for (int i = 0; i < kRecordsPerCommit; ++i)
      round.push_back(test::test_record(1 + (r % 3), test::kX86, t(rng),
                                        int(r * kRecordsPerCommit + i),
                                        "round-" + std::to_string(r)));
    db->commit_round(round);
    if (::write(committed_fd, "c", 1) != 1) _exit(97);
  }
}

}  // namespace

TEST(CrashSafety, SigkillAtRandomMoments) {
  test::TempDir dir;
  std::string path = dir.file("tuning.db");
  {
    auto db = SqliteDatabase::open(path);
    for (int w = 0; w < 3; ++w) db->commit_workload(test::test_workload(w));
  }
  std::mt19937 rng(2026);
  // Mostly short lives (kills during open, recovery and the first commits), some longer.
  std::uniform_int_distribution<int> life_us(500, 40000);
  int64_t rounds = 0, grew = 0;
  for (int kill = 0; kill < kKills; ++kill) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    pid_t pid = test::spawn([&]() -> int {
      ::close(fds[0]);
      endless_writer(path, kill, fds[1]);
    });
    ::close(fds[1]);
    // Every other kill waits for a commit first: on a loaded machine a writer may not get
    // that far within its random life, and kills after commits must be among the 50.
    if (kill % 2) {
      pollfd p{fds[0], POLLIN, 0};
      char c;
      bool committed = ::poll(&p, 1, 30000) == 1 && ::read(fds[0], &c, 1) == 1;
      if (!committed) ::kill(pid, SIGKILL);
      ASSERT_TRUE(committed) << "the writer did not commit within 30 s";
    }
    std::this_thread::sleep_for(std::chrono::microseconds(life_us(rng)));
    ASSERT_EQ(::kill(pid, SIGKILL), 0);
    ASSERT_EQ(test::wait_exit(pid), 128 + SIGKILL) << "the writer died on its own";
    ::close(fds[0]);

    auto db = SqliteDatabase::open(path);
    VerifyReport rep = db->verify();  // PRAGMA integrity_check, keys, medians
    ASSERT_TRUE(rep.ok()) << "after kill " << kill << ": " << rep.problems.front();
    DbStats s = db->stats();
    std::set<std::string> expect;
    for (int64_t r = 0; r < s.records / kRecordsPerCommit; ++r)
      expect.insert("round-" + std::to_string(r));
    std::set<std::string> seen;
    for (auto& [worker, n] : s.by_worker) {
      ASSERT_EQ(n, kRecordsPerCommit) << worker << " is partly present after kill " << kill;
      seen.insert(worker);
    }
    ASSERT_EQ(seen, expect) << "rounds are not a prefix after kill " << kill;
    grew += s.records / kRecordsPerCommit > rounds;
    rounds = s.records / kRecordsPerCommit;
  }
  RecordProperty("rounds", std::to_string(rounds));
  EXPECT_GT(rounds, 0);
  EXPECT_GT(grew, 10) << "too few kills landed after a commit";
}

}  // namespace tuner::db
