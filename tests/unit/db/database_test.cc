// The Database contract, checked on both implementations (SQLite and in-memory).
#include "db/database.h"

#include <set>

#include <gtest/gtest.h>

#include "db/memory_database.h"
#include "db/sqlite_database.h"
#include "support/error.h"
#include "unit/db/db_test_util.h"

namespace tuner::db {

namespace fs = std::filesystem;

using test::kArm;
using test::kX86;
using test::test_error;
using test::test_record;
using test::test_workload;

template <class DB>
class DatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if constexpr (std::is_same_v<DB, SqliteDatabase>)
      db_ = SqliteDatabase::open(dir_.file("tuning.db"));
    else
      db_ = std::make_unique<MemoryDatabase>();
  }
  Database& db() { return *db_; }
  test::TempDir dir_;
  std::unique_ptr<Database> db_;
};

using Implementations = ::testing::Types<SqliteDatabase, MemoryDatabase>;
TYPED_TEST_SUITE(DatabaseTest, Implementations);

TYPED_TEST(DatabaseTest, CommitWorkloadIsIdempotent) {
  Database& db = this->db();
  int64_t a = db.commit_workload(test_workload(0));
  int64_t b = db.commit_workload(test_workload(1));
  EXPECT_NE(a, b);
  EXPECT_EQ(db.commit_workload(test_workload(0)), a);
  auto w = db.workload(a);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->hash, test_workload(0).hash);
  EXPECT_EQ(w->shapes, test_workload(0).shapes);
  EXPECT_EQ(w->params, test_workload(0).params);
  EXPECT_GT(w->created_ms, 0);
  EXPECT_EQ(db.find_workload(test_workload(1).hash)->id, b);
  EXPECT_FALSE(db.find_workload("0000000000000000"));
  EXPECT_FALSE(db.workload(12345));
  auto all = db.workloads();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_LT(all[0].hash, all[1].hash);
}

TYPED_TEST(DatabaseTest, RejectsMalformedWorkloads) {
  Workload w = test_workload(0);
  w.canonical += "\n";  // hash no longer matches
  EXPECT_THROW(this->db().commit_workload(w), UserError);
  EXPECT_TRUE(this->db().workloads().empty());
}

TYPED_TEST(DatabaseTest, CommitRoundAssignsIdsAndDedupes) {
  Database& db = this->db();
  int64_t w = db.commit_workload(test_workload(0));
  std::vector<Record> round = {test_record(w, kX86, 3e-3, 1), test_record(w, kX86, 1e-3, 2),
                               test_error(w, kX86, MeasureStatus::CompileHost, 3)};
  round[0].created_ms = round[1].created_ms = round[2].created_ms = 1000;
  CommitResult c = db.commit_round(round);
  ASSERT_EQ(c.ids.size(), 3u);
  EXPECT_EQ(c.inserted, 3);
  CommitResult again = db.commit_round(round);
  EXPECT_EQ(again.inserted, 0);
  EXPECT_EQ(again.ids, c.ids);
  EXPECT_EQ(db.count_records({}), 3);

  auto r = db.record(c.ids[1]);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->workload_id, w);
  EXPECT_EQ(r->target, kX86);
  EXPECT_EQ(r->times, round[1].times);
  ASSERT_TRUE(r->median);
  EXPECT_DOUBLE_EQ(*r->median, 1e-3);
  EXPECT_EQ(r->key.size(), 32u);
  EXPECT_EQ(r->trace, compact_trace(round[1].trace));
  EXPECT_EQ(r->created_ms, 1000);
  auto e = db.record(c.ids[2]);
  EXPECT_EQ(e->status, MeasureStatus::CompileHost);
  EXPECT_FALSE(e->median);
  EXPECT_EQ(e->error, round[2].error);
  EXPECT_FALSE(db.record(999999));
}

TYPED_TEST(DatabaseTest, BadRoundCommitsNothing) {
  Database& db = this->db();
  int64_t w = db.commit_workload(test_workload(0));
  std::vector<Record> round = {test_record(w, kX86, 1e-3, 1), test_record(w + 1000, kX86, 1, 2)};
  EXPECT_THROW(db.commit_round(round), UserError);
  round[1] = test_record(w, kX86, 1e-3, 2);
  round[1].times = {};
  EXPECT_THROW(db.commit_round(round), UserError);
  round[1] = test_record(w, kX86, 1e-3, 2);
  round[1].run_id = 777;
  EXPECT_THROW(db.commit_round(round), UserError);
  EXPECT_EQ(db.count_records({}), 0);
}

TYPED_TEST(DatabaseTest, TopKIsByMedianAndTargetAware) {
  Database& db = this->db();
  int64_t w0 = db.commit_workload(test_workload(0));
  int64_t w1 = db.commit_workload(test_workload(1));
  std::vector<Record> round;
  for (int i = 0; i < 10; ++i) round.push_back(test_record(w0, kX86, 1e-3 * (10 - i), i));
  round.push_back(test_record(w0, kArm, 1e-6, 100));  // fastest, but another target
  round.push_back(test_record(w1, kX86, 1e-7, 101));  // fastest, but another workload
  round.push_back(test_error(w0, kX86, MeasureStatus::WrongAnswer, 102));
  db.commit_round(round);

  auto top = db.top_k(w0, kX86, 3);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_DOUBLE_EQ(*top[0].median, 1e-3);
  EXPECT_DOUBLE_EQ(*top[1].median, 2e-3);
  EXPECT_DOUBLE_EQ(*top[2].median, 3e-3);
  for (auto& r : top) {
    EXPECT_EQ(r.target, kX86);
    EXPECT_EQ(r.status, MeasureStatus::Ok);
  }
  EXPECT_EQ(db.top_k(w0, kX86, 100).size(), 10u);
  EXPECT_EQ(db.top_k(w0, kArm, 5).size(), 1u);
  EXPECT_TRUE(db.top_k(w0, "cuda -arch=sm_90", 5).empty());
  EXPECT_TRUE(db.top_k(w0, "llvm", 5).empty());  // exact target strings only
  EXPECT_TRUE(db.top_k(w0, kX86, 0).empty());

  // A timing inside a whole model is not a measurement to rank or train on.
  Record in_model = test_record(w0, kX86, 1e-9, 103);
  in_model.worker = kModelWorker;
  db.commit_round(std::vector<Record>{in_model});
  EXPECT_DOUBLE_EQ(*db.top_k(w0, kX86, 1)[0].median, 1e-3);
  for (const Record& r : db.ok_records(kX86)) EXPECT_NE(r.worker, kModelWorker);
  EXPECT_EQ(db.ok_records(kX86).size(), 11u);
}

TYPED_TEST(DatabaseTest, CountsFilter) {
  Database& db = this->db();
  int64_t w0 = db.commit_workload(test_workload(0));
  int64_t w1 = db.commit_workload(test_workload(1));
  int64_t run = db.create_run("model.onnx", Json{{"trials", 10}});
  std::vector<Record> round = {test_record(w0, kX86, 1, 0), test_record(w0, kArm, 1, 1),
                               test_record(w1, kX86, 1, 2),
                               test_error(w1, kX86, MeasureStatus::RunTimeout, 3)};
  round[3].run_id = run;
  db.commit_round(round);
  EXPECT_EQ(db.count_records({}), 4);
  EXPECT_EQ(db.count_records({.workload_id = w0}), 2);
  EXPECT_EQ(db.count_records({.target = kX86}), 3);
  EXPECT_EQ(db.count_records({.workload_id = w1, .target = std::string(kX86)}), 2);
  EXPECT_EQ(db.count_records({.status = MeasureStatus::Ok}), 3);
  EXPECT_EQ(db.count_records({.status = MeasureStatus::RunTimeout}), 1);
  EXPECT_EQ(db.count_records({.run_id = run}), 1);
  EXPECT_EQ(db.count_records({.target = "nope"}), 0);
}

TYPED_TEST(DatabaseTest, OkRecordsOfATargetIncrementally) {
  Database& db = this->db();
  int64_t w = db.commit_workload(test_workload(0));
  auto first =
      db.commit_round(std::vector<Record>{test_record(w, kX86, 1, 0), test_record(w, kArm, 1, 1),
                                          test_error(w, kX86, MeasureStatus::Instantiation, 2)});
  auto all = db.ok_records(kX86);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].id, first.ids[0]);
  auto second = db.commit_round(std::vector<Record>{test_record(w, kX86, 2, 3)});
  auto fresh = db.ok_records(kX86, all.back().id);
  ASSERT_EQ(fresh.size(), 1u);
  EXPECT_EQ(fresh[0].id, second.ids[0]);
  EXPECT_EQ(db.ok_records(kX86).size(), 2u);
  EXPECT_TRUE(db.ok_records("cuda").empty());
}

TYPED_TEST(DatabaseTest, ForEachRecordUsesCanonicalOrder) {
  Database& db = this->db();
  int64_t w0 = db.commit_workload(test_workload(0));
  int64_t w1 = db.commit_workload(test_workload(1));
  std::vector<Record> round;
  for (int i = 0; i < 6; ++i) {
    Record r = test_record(i % 2 ? w0 : w1, i % 3 ? kX86 : kArm, 1e-3, i);
    r.created_ms = 5000 - i;
    round.push_back(r);
  }
  db.commit_round(round);
  std::vector<std::tuple<std::string, std::string, int64_t>> seen;
  db.for_each_record({}, [&](const Workload& w, const Record& r) {
    EXPECT_EQ(w.id, r.workload_id);
    seen.emplace_back(w.hash, r.target, r.created_ms);
  });
  ASSERT_EQ(seen.size(), 6u);
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  int n = 0;
  db.for_each_record({.target = kArm}, [&](const Workload&, const Record& r) {
    EXPECT_EQ(r.target, kArm);
    ++n;
  });
  EXPECT_EQ(n, 2);
}

TYPED_TEST(DatabaseTest, SummariesAndStats) {
  Database& db = this->db();
  int64_t w0 = db.commit_workload(test_workload(0));
  int64_t w1 = db.commit_workload(test_workload(1));
  db.commit_round(std::vector<Record>{
      test_record(w0, kX86, 2e-3, 0, "a"), test_record(w0, kX86, 1e-3, 1, "b"),
      test_error(w0, kX86, MeasureStatus::CompileHost, 2), test_record(w1, kArm, 5e-3, 3, "a"),
      test_error(w1, kX86, MeasureStatus::BuildTimeout, 4),
      // A kernel timed inside its model is not the best measured alone (db list showed it).
      test_record(w0, kX86, 1e-4, 5, std::string(kModelWorker))});
  auto sums = db.summaries();
  ASSERT_EQ(sums.size(), 3u);
  for (auto& s : sums) {
    if (s.workload_id == w0) {
      EXPECT_EQ(s.target, kX86);
      EXPECT_EQ(s.records, 4);
      EXPECT_EQ(s.ok_records, 3);
      EXPECT_DOUBLE_EQ(*s.best_median, 1e-3);
    } else if (s.target == kX86) {
      EXPECT_EQ(s.ok_records, 0);
      EXPECT_FALSE(s.best_median);
    } else {
      EXPECT_DOUBLE_EQ(*s.best_median, 5e-3);
    }
  }
  DbStats st = db.stats();
  EXPECT_EQ(st.workloads, 2);
  EXPECT_EQ(st.targets, 2);
  EXPECT_EQ(st.records, 6);
  using P = std::vector<std::pair<std::string, int64_t>>;
  EXPECT_EQ(st.by_status, (P{{"BUILD_TIMEOUT", 1}, {"COMPILE_HOST", 1}, {"ok", 4}}));
  EXPECT_EQ(st.by_target, (P{{kArm, 1}, {kX86, 5}}));
  EXPECT_EQ(st.by_worker, (P{{"a", 2}, {"b", 1}, {"in-model", 1}, {"local", 2}}));
}

TYPED_TEST(DatabaseTest, PruneKeepsTheBestPerWorkloadAndTarget) {
  Database& db = this->db();
  int64_t w0 = db.commit_workload(test_workload(0));
  int64_t w1 = db.commit_workload(test_workload(1));
  std::vector<Record> round;
  for (int i = 0; i < 5; ++i) {
    round.push_back(test_record(w0, kX86, 1e-3 * (i + 1), i));
    round.push_back(test_record(w0, kArm, 1e-3 * (i + 1), 10 + i));
    round.push_back(test_record(w1, kX86, 1e-3 * (i + 1), 20 + i));
  }
  round.push_back(test_error(w0, kX86, MeasureStatus::CompileHost, 30));
  db.commit_round(round);
  EXPECT_THROW(db.prune(0), UserError);
  EXPECT_EQ(db.prune(2), 16 - 6);
  EXPECT_EQ(db.count_records({}), 6);
  auto top = db.top_k(w0, kX86, 5);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_DOUBLE_EQ(*top[1].median, 2e-3);
  EXPECT_EQ(db.prune(2), 0);
  // A pruned record may be committed again.
  EXPECT_EQ(db.commit_round(std::vector<Record>{round[14]}).inserted, 1);
}

// Compile chooses by a workload's latest validation and in-model timing
// (compile/schedule_choice.cc): prune keeps those whole, whatever their times.
TYPED_TEST(DatabaseTest, PruneKeepsTheLatestValidationAndInModelTiming) {
  Database& db = this->db();
  int64_t w = db.commit_workload(test_workload(0));
  std::vector<Record> round;
  auto add = [&](double seconds, int tag, std::string_view worker, int64_t created) {
    round.push_back(test_record(w, kX86, seconds, tag));
    round.back().worker = std::string(worker);
    round.back().created_ms = created;
  };
  for (int i = 0; i < 4; ++i) add(1e-3 * (i + 1), i, "local", 100);
  // Validation re-measures the fastest schedules, often faster than their first records:
  // these rank with the timing records, not in the places of the `keep` fastest tuning ones.
  add(0.1e-3, 10, kValidationWorker, 1000);  // an older validation
  add(0.2e-3, 11, kValidationWorker, 1000);
  add(0.3e-3, 12, kValidationWorker, 2000);  // the latest
  add(0.4e-3, 13, kValidationWorker, 2000);
  add(9e-3, 14, kModelWorker, 500);  // an older in-model timing
  add(0.5e-3, 15, kModelWorker, 1500);  // the latest; faster than any, but not measured alone
  add(9e-3, 16, kModelWorker, 1500);
  CommitResult c = db.commit_round(round);
  EXPECT_EQ(db.prune(2), 5);  // local 3 ms and 4 ms, the older validation and timing
  std::set<int64_t> left;
  db.for_each_record({}, [&](const Workload&, const Record& r) { left.insert(r.id); });
  EXPECT_EQ(left, (std::set<int64_t>{c.ids[0], c.ids[1], c.ids[6], c.ids[7], c.ids[9], c.ids[10]}));
  EXPECT_EQ(db.prune(2), 0);
}

TYPED_TEST(DatabaseTest, TuningRunsResume) {
  Database& db = this->db();
  int64_t id = db.create_run("resnet50.onnx", Json{{"target", "llvm"}, {"trials", 2000}});
  auto r = db.run(id);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->what, "resnet50.onnx");
  EXPECT_EQ(r->args["trials"], 2000);
  EXPECT_EQ(r->state, RunState::Running);
  EXPECT_FALSE(r->finished_ms);
  db.update_run(id, RunState::Running, Json{{"trials_done", 640}});
  EXPECT_EQ(db.run(id)->progress["trials_done"], 640);
  db.update_run(id, RunState::Interrupted, Json{{"trials_done", 700}});
  r = db.run(id);
  EXPECT_EQ(r->state, RunState::Interrupted);
  EXPECT_TRUE(r->finished_ms);
  EXPECT_THROW(db.update_run(id + 100, RunState::Failed, {}), UserError);
  int64_t second = db.create_run("bert.onnx", Json::object());
  auto all = db.runs();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].id, second);  // newest first
  EXPECT_FALSE(db.run(424242));
}

TYPED_TEST(DatabaseTest, CostModelsPerTargetAndFeatureVersion) {
  Database& db = this->db();
  std::string blob("\x00\x01\xffmodel", 8);
  db.save_cost_model({kX86, 1, "xgboost", blob, 500});
  db.save_cost_model({kArm, 1, "xgboost", "arm", 10});
  auto m = db.load_cost_model(kX86, 1, "xgboost");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->blob, blob);
  EXPECT_EQ(m->num_records, 500);
  EXPECT_FALSE(db.load_cost_model(kX86, 2, "xgboost"));
  EXPECT_FALSE(db.load_cost_model(kX86, 1, "random"));
  db.save_cost_model({kX86, 1, "xgboost", "newer", 900});
  EXPECT_EQ(db.load_cost_model(kX86, 1, "xgboost")->blob, "newer");
  EXPECT_EQ(db.load_cost_model(kArm, 1, "xgboost")->blob, "arm");
}

TYPED_TEST(DatabaseTest, TargetsKeepHardwareParameters) {
  Database& db = this->db();
  db.commit_target({0, kX86, Json{{"cores", 16}, {"vector_bits", 512}}});
  int64_t w = db.commit_workload(test_workload(0));
  db.commit_round(std::vector<Record>{test_record(w, kArm, 1, 0)});
  auto ts = db.targets();
  ASSERT_EQ(ts.size(), 2u);
  EXPECT_EQ(ts[0].name, kArm);
  EXPECT_EQ(ts[1].hardware["vector_bits"], 512);
  db.commit_target({0, kX86, Json{{"cores", 8}}});
  EXPECT_EQ(db.targets()[1].hardware["cores"], 8);
}

}  // namespace tuner::db
