// Acceptance (issue 5): one process commits 10,000 records in rounds while three processes
// query and one exports. No SQLITE_BUSY reaches any of them (any exception fails the child),
// every reader sees only whole rounds, and the final counts are exact.
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <sstream>
#include <thread>

#include "db/jsonl.h"
#include "db/sqlite_database.h"
#include "unit/db/db_test_util.h"

namespace tuner::db {

namespace fs = std::filesystem;

using test::kArm;
using test::kX86;

namespace {

constexpr int kRoundSize = 50;
constexpr int kRounds = 200;  // 10,000 records
constexpr int kTotal = kRoundSize * kRounds;
constexpr int kWorkloads = 4;
constexpr auto kPatience = std::chrono::seconds(120);

// Round r: kRoundSize records of workload r % kWorkloads on alternating targets, all with
// worker "round-r", so any partial round shows up as a worker count below kRoundSize.
std::vector<Record> make_round(int r, std::mt19937& rng) {
  std::uniform_real_distribution<double> t(1e-5, 1e-2);
  std::vector<Record> out;
  for (int i = 0; i < kRoundSize; ++i) {
    Record rec = test::test_record(r % kWorkloads + 1, r % 2 ? kX86 : kArm, t(rng),
                                   r * kRoundSize + i, "round-" + std::to_string(r));
    if (i % 10 == 9) {
      rec.status = MeasureStatus::CompileHost;
      rec.times.clear();
      rec.error = "llc failed";
    }
    out.push_back(std::move(rec));
  }
  return out;
}

// Fails (throws) unless `by_worker` shows only whole rounds; returns how many rounds.
int64_t whole_rounds(const std::vector<std::pair<std::string, int64_t>>& by_worker) {
  for (auto& [worker, n] : by_worker)
    if (n != kRoundSize)
      throw std::runtime_error(worker + " is partly visible: " + std::to_string(n) + " records");
  return int64_t(by_worker.size());
}

int writer(const std::string& path) {
  auto db = SqliteDatabase::open(path);
  std::mt19937 rng(7);
  for (int r = 0; r < kRounds; ++r) {
    auto c = db->commit_round(make_round(r, rng));
    if (c.inserted != kRoundSize) return 3;
  }
  return 0;
}

int reader(const std::string& path, int who) {
  auto db = SqliteDatabase::open(path, {.mode = OpenMode::ReadOnly});
  auto start = std::chrono::steady_clock::now();
  int64_t last = 0, queries = 0;
  while (last < kTotal) {
    if (std::chrono::steady_clock::now() - start > kPatience) return 4;
    int64_t total = db->count_records({});
    if (total % kRoundSize || total < last) return 5;
    DbStats s = db->stats();
    if (whole_rounds(s.by_worker) * kRoundSize != s.records || s.records < total) return 6;
    for (const char* t : {kX86, kArm}) {
      if (db->count_records({.target = t}) % kRoundSize) return 7;
      auto top = db->top_k(1 + who % kWorkloads, t, 5);
      for (size_t i = 1; i < top.size(); ++i)
        if (*top[i - 1].median > *top[i].median || top[i].target != t) return 8;
    }
    int64_t sum = 0;
    for (auto& w : db->summaries()) sum += w.records;
    if (sum % kRoundSize) return 9;
    last = total;
    ++queries;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return queries > 0 ? 0 : 10;
}

int exporter(const std::string& path) {
  auto db = SqliteDatabase::open(path, {.mode = OpenMode::ReadOnly});
  auto start = std::chrono::steady_clock::now();
  int64_t lines = 0;
  while (lines < kTotal) {
    if (std::chrono::steady_clock::now() - start > kPatience) return 4;
    std::ostringstream out;
    lines = export_jsonl(*db, out);
    std::map<std::string, int64_t> per_round;
    std::istringstream in(out.str());
    for (std::string l; std::getline(in, l);) ++per_round[Json::parse(l)["worker"]];
    std::vector<std::pair<std::string, int64_t>> rounds(per_round.begin(), per_round.end());
    if (whole_rounds(rounds) * kRoundSize != lines) return 5;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return 0;
}

}  // namespace

TEST(Concurrency, OneWriterThreeReadersOneExporter) {
  test::TempDir dir;
  std::string path = dir.file("tuning.db");
  {
    auto db = SqliteDatabase::open(path);
    for (int w = 0; w < kWorkloads; ++w)
      ASSERT_EQ(db->commit_workload(test::test_workload(w)), w + 1);
  }
  auto t0 = std::chrono::steady_clock::now();
  std::vector<pid_t> kids;
  kids.push_back(test::spawn([&] { return writer(path); }));
  for (int i = 0; i < 3; ++i) kids.push_back(test::spawn([&, i] { return reader(path, i); }));
  kids.push_back(test::spawn([&] { return exporter(path); }));
  const char* role[] = {"writer", "reader 1", "reader 2", "reader 3", "exporter"};
  for (size_t i = 0; i < kids.size(); ++i) EXPECT_EQ(test::wait_exit(kids[i]), 0) << role[i];
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  RecordProperty("seconds", std::to_string(secs));

  auto db = SqliteDatabase::open(path);
  EXPECT_EQ(db->count_records({}), kTotal);
  EXPECT_EQ(db->count_records({.status = MeasureStatus::Ok}), kTotal * 9 / 10);
  EXPECT_EQ(db->count_records({.target = kX86}), kTotal / 2);
  DbStats s = db->stats();
  EXPECT_EQ(whole_rounds(s.by_worker), kRounds);
  VerifyReport rep = db->verify();
  EXPECT_TRUE(rep.ok()) << rep.problems.front();
}

}  // namespace tuner::db
