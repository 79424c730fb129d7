#include <gtest/gtest.h>

#include <map>
#include <set>
#include <thread>

#include "codegen/default_schedule.h"
#include "compile/schedule_choice.h"
#include "costmodel/random_model.h"
#include "db/memory_database.h"
#include "measure/builder.h"
#include "ops/registry.h"
#include "search/evolutionary.h"
#include "search/validate.h"

using namespace tuner;

namespace {

// Measures every program at its true time (by program hash) and remembers the order.
class TableRunner : public measure::Runner {
 public:
  std::map<uint64_t, double> seconds;
  std::vector<uint64_t> first_of_round;
  size_t measured = 0;

  std::vector<measure::MeasureResult> run(const measure::MeasureTask&,
                                          const std::vector<measure::BuiltCandidate>& cands) override {
    first_of_round.push_back(cands.at(0).program_hash);
    // Rounds a few milliseconds apart, as real ones are: commits per round would differ.
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    std::vector<measure::MeasureResult> out;
    for (const auto& c : cands) {
      measure::MeasureResult r;
      r.status = db::MeasureStatus::Ok;
      // Real repeats never time alike (equal records would be one record).
      r.times = {seconds.at(c.program_hash) * (1 + 1e-6 * double(measured))};
      out.push_back(r);
      ++measured;
    }
    return out;
  }
};

// One validation or timing inside the model (cli/model_validate.h): every schedule's record
// in one commit, at `created_ms`.
void commit_timings(db::Database& db, int64_t wid, const codegen::Target& target,
                    const std::vector<std::pair<schedule::Trace, double>>& times, int64_t created_ms,
                    std::string_view worker = db::kModelWorker) {
  std::vector<db::Record> round;
  for (const auto& [trace, ms] : times) {
    measure::MeasureResult r;
    r.status = db::MeasureStatus::Ok;
    r.times = {ms * 1e-3, ms * 1e-3 * 1.001};
    round.push_back(search::make_record(wid, target.str(), trace, r, std::string(worker), std::nullopt));
    round.back().created_ms = created_ms;
  }
  db.commit_round(round);
}

// After any real commit time: timings committed later than validate_best's.
constexpr int64_t kLater = 4'000'000'000'000;

// `n` schedules of matmul's space (random model, seed 1).
std::vector<schedule::Trace> proposed(const te::ComputeDAG& dag, int n) {
  costmodel::RandomModel model(1);
  search::EvolutionarySearch es(dag, search::SpaceOptions{}, search::SearchOptions{}, &model, 1);
  std::vector<schedule::Trace> traces;
  for (auto& c : es.propose(n)) traces.push_back(c.trace());
  return traces;
}

// matmul 64^3 on llvm with two schedules of its space, its fallback and an empty database
// holding its workload.
struct TwoSchedules : ::testing::Test {
  te::ComputeDAG dag = ops::find_op("matmul").build(
      ops::parse_params(ops::find_op("matmul"), {"m=64", "n=64", "k=64"}));
  codegen::Target target = codegen::Target::parse("llvm");
  std::vector<schedule::Trace> traces = proposed(dag, 2);
  schedule::Trace fallback = codegen::default_schedule(dag, target).trace();
  db::MemoryDatabase db;
  int64_t wid = db.commit_workload(db::Workload::from_dag(dag, "matmul", "m=64 n=64 k=64"));

  void SetUp() override {
    ASSERT_EQ(traces.size(), 2u);
    ASSERT_NE(traces[0].str(), fallback.str());
    ASSERT_NE(traces[1].str(), fallback.str());
  }
};

}  // namespace

TEST(Validate, CompileChoosesByTheRepeatedMeasurementsNotTheLuckiestRecord) {
  auto& def = ops::find_op("matmul");
  ops::Params params = ops::parse_params(def, {"m=64", "n=64", "k=64"});
  auto dag = def.build(params);
  auto target = codegen::Target::parse("llvm");
  // Three schedules of the space and the fallback, each with a single tuning record. The
  // fastest record is a lucky one: its schedule is the slowest of all when measured again.
  std::vector<schedule::Trace> traces = proposed(dag, 3);
  ASSERT_EQ(traces.size(), 3u);
  traces.push_back(codegen::default_schedule(dag, target).trace());
  const std::vector<double> recorded = {1.0, 1.2, 1.3, 2.5}, truth = {3.0, 1.5, 2.0, 2.5};

  measure::Builder builder;
  auto built = builder.build(dag, traces, target);
  TableRunner runner;
  for (size_t i = 0; i < built.size(); ++i) {
    ASSERT_TRUE(built[i].ok()) << built[i].error;
    runner.seconds[built[i].program_hash] = truth[i] * 1e-3;
  }
  ASSERT_EQ(runner.seconds.size(), 4u) << "the four schedules must be different programs";

  db::MemoryDatabase db;
  int64_t wid = db.commit_workload(db::Workload::from_dag(dag, "matmul", "m=64 n=64 k=64"));
  int64_t run = db.create_run("test", Json::object());
  std::vector<db::Record> round;
  for (size_t i = 0; i < traces.size(); ++i) {
    measure::MeasureResult r;
    r.status = db::MeasureStatus::Ok;
    r.times = {recorded[i] * 1e-3};
    round.push_back(search::make_record(wid, target.str(), traces[i], r, "local", run));
  }
  db.commit_round(round);
  EXPECT_EQ(compile::choose_schedule(dag, target, &db).sched.trace().str(), traces[0].str());
  EXPECT_FALSE(compile::validated_times(dag, target, db)) << "nothing validated yet";

  search::TuneTask task{dag, "matmul", "m=64 n=64 k=64", target, {}};
  search::ValidateOptions vo;  // top 3 and the fallback, 3 rounds
  int added = search::validate_best({task}, vo, db, builder, runner);
  EXPECT_EQ(added, 12);
  EXPECT_EQ(runner.measured, 12u);
  // Each round starts with another candidate.
  EXPECT_EQ(std::set<uint64_t>(runner.first_of_round.begin(), runner.first_of_round.end()).size(), 3u);
  // Validation records are not trials of the run.
  db::RecordFilter of_run;
  of_run.run_id = run;
  EXPECT_EQ(db.count_records(of_run), 4);
  db::RecordFilter all;
  all.workload_id = wid;
  EXPECT_EQ(db.count_records(all), 16);
  // One commit for the task's validation: compile compares within its latest commit.
  std::set<int64_t> validated_at;
  db.for_each_record(all, [&](const db::Workload&, const db::Record& r) {
    if (r.worker == db::kValidationWorker) validated_at.insert(r.created_ms);
  });
  EXPECT_EQ(validated_at.size(), 1u);

  // What `tuner tune` shows: the fallback and the fastest as measured again, not the
  // fallback's first record and the luckiest one.
  auto vt = compile::validated_times(dag, target, db);
  ASSERT_TRUE(vt);
  EXPECT_NEAR(vt->fallback, truth[3] * 1e-3, 1e-7);
  EXPECT_NEAR(vt->best, truth[1] * 1e-3, 1e-7);

  compile::ChosenSchedule c = compile::choose_schedule(dag, target, &db);
  EXPECT_EQ(c.sched.trace().str(), traces[1].str());
  EXPECT_NE(c.source.find("validated"), std::string::npos) << c.source;

  // Timed inside the model (cli/model_validate.h), the fallback beats the validated choice:
  // compile takes the fallback, unless told to ignore in-model timings.
  commit_timings(db, wid, target, {{traces[1], 0.9}, {traces[3], 0.7}}, kLater + 1000);
  c = compile::choose_schedule(dag, target, &db);
  EXPECT_EQ(c.sched.trace().str(), traces[3].str());
  EXPECT_NE(c.source.find("faster in the model"), std::string::npos) << c.source;
  EXPECT_EQ(compile::choose_schedule(dag, target, &db, false).sched.trace().str(), traces[1].str());

  // A schedule within 3 % of the fallback in the model does not replace it (the fastest of a
  // few noisy medians is biased low); one 3 % faster or more does.
  commit_timings(db, wid, target, {{traces[0], 0.69}, {traces[3], 0.7}}, kLater + 2000);
  c = compile::choose_schedule(dag, target, &db);
  EXPECT_EQ(c.sched.trace().str(), traces[3].str());
  EXPECT_FALSE(c.from_db);
  EXPECT_NE(c.source.find("fallback"), std::string::npos) << c.source;
  commit_timings(db, wid, target, {{traces[2], 0.50}, {traces[3], 0.7}}, kLater + 3000);
  c = compile::choose_schedule(dag, target, &db);
  EXPECT_EQ(c.sched.trace().str(), traces[2].str());
  EXPECT_NE(c.source.find("faster in the model"), std::string::npos) << c.source;
  // The latest timing decides alone: pooled with the one before, traces[2] (0.50 and 0.70
  // ms) would still beat the fallback (0.7 ms).
  commit_timings(db, wid, target, {{traces[2], 0.70}, {traces[3], 0.69}}, kLater + 4000);
  c = compile::choose_schedule(dag, target, &db);
  EXPECT_EQ(c.sched.trace().str(), traces[3].str()) << c.source;
  EXPECT_FALSE(c.from_db);
  // A validation after the last timing in the model (`tune --no-compile` again) decides.
  commit_timings(db, wid, target, {{traces[0], 0.5}, {traces[3], 0.7}}, kLater + 5000,
                 db::kValidationWorker);
  c = compile::choose_schedule(dag, target, &db);
  EXPECT_EQ(c.sched.trace().str(), traces[0].str()) << c.source;
  EXPECT_NE(c.source.find("validated"), std::string::npos) << c.source;
}

namespace {  // beside its fixture (a unity build warns of a test outside, -Wsubobject-linkage)

// Timings after tuning that did not include this Tuner's fallback (an older Tuner's fallback
// was timed with them) still choose, but the choice is marked: compile warns about it.
TEST_F(TwoSchedules, ChoicesTimedWithoutThisFallbackAreMarked) {
  commit_timings(db, wid, target, {{traces[0], 1.0}, {traces[1], 1.5}}, 1000, db::kValidationWorker);
  compile::ChosenSchedule c = compile::choose_schedule(dag, target, &db);
  EXPECT_EQ(c.sched.trace().str(), traces[0].str());
  EXPECT_TRUE(c.against_other_fallback);
  EXPECT_NE(c.source.find("another fallback"), std::string::npos) << c.source;
  commit_timings(db, wid, target, {{traces[0], 1.0}, {traces[1], 1.5}, {fallback, 2.0}}, 2000,
                 db::kValidationWorker);
  c = compile::choose_schedule(dag, target, &db);
  EXPECT_EQ(c.sched.trace().str(), traces[0].str());
  EXPECT_FALSE(c.against_other_fallback) << c.source;
  // The latest validation decides alone (pooled, traces[0]'s 1.0 ms would still win).
  commit_timings(db, wid, target, {{traces[0], 1.0}, {traces[1], 0.8}, {fallback, 2.0}}, 3000,
                 db::kValidationWorker);
  EXPECT_EQ(compile::choose_schedule(dag, target, &db).sched.trace().str(), traces[1].str());
  auto vt = compile::validated_times(dag, target, db);
  ASSERT_TRUE(vt);
  EXPECT_NEAR(vt->best, 0.8e-3, 1e-6);

  // The fallback itself the fastest: chosen as the fallback, not as a tuned record.
  commit_timings(db, wid, target, {{traces[0], 1.0}, {traces[1], 0.8}, {fallback, 0.7}}, 3500,
                 db::kValidationWorker);
  c = compile::choose_schedule(dag, target, &db);
  EXPECT_EQ(c.sched.trace().str(), fallback.str());
  EXPECT_FALSE(c.from_db);
  EXPECT_FALSE(c.against_other_fallback) << c.source;

  // Timed inside the model without the fallback: marked again, until the fallback is timed.
  commit_timings(db, wid, target, {{traces[1], 0.8}}, 4000);
  c = compile::choose_schedule(dag, target, &db);
  EXPECT_EQ(c.sched.trace().str(), traces[1].str());
  EXPECT_NE(c.source.find("faster in the model"), std::string::npos) << c.source;
  EXPECT_TRUE(c.against_other_fallback);
  commit_timings(db, wid, target, {{traces[1], 0.8}, {fallback, 0.9}}, 5000);
  c = compile::choose_schedule(dag, target, &db);
  EXPECT_EQ(c.sched.trace().str(), traces[1].str());
  EXPECT_FALSE(c.against_other_fallback) << c.source;
}

// A later validation none of whose traces replay (imported from a Tuner whose stages had
// other names) does not hide an earlier one that does.
TEST_F(TwoSchedules, AValidationThatNoLongerReplaysDoesNotHideAnOlderOne) {
  commit_timings(db, wid, target, {{traces[0], 1.0}, {fallback, 2.0}}, 1000,
                 db::kValidationWorker);
  std::vector<db::Record> stale;
  for (const auto& t : {traces[1], fallback}) {
    measure::MeasureResult r;
    r.status = db::MeasureStatus::Ok;
    r.times = {0.5e-3, 0.5e-3};
    stale.push_back(search::make_record(wid, target.str(), t, r,
                                        std::string(db::kValidationWorker), std::nullopt));
    std::string& s = stale.back().trace;
    for (size_t at = 0; (at = s.find("\"stage\":\"", at)) != std::string::npos; at += 9)
      s.insert(at + 9, "old_");
    stale.back().created_ms = 2000;
  }
  db.commit_round(stale);

  compile::ChosenSchedule c = compile::choose_schedule(dag, target, &db);
  EXPECT_EQ(c.sched.trace().str(), traces[0].str()) << c.source;
  EXPECT_NE(c.source.find("validated"), std::string::npos) << c.source;
  auto vt = compile::validated_times(dag, target, db);
  ASSERT_TRUE(vt);
  EXPECT_NEAR(vt->best, 1.0e-3, 1e-5);
  EXPECT_NEAR(vt->fallback, 2.0e-3, 1e-5);

  // An in-model timing that no longer replays does not outrank the validation either.
  for (auto& r : stale) r.created_ms = 3000, r.worker = std::string(db::kModelWorker);
  db.commit_round(stale);
  EXPECT_EQ(compile::choose_schedule(dag, target, &db).sched.trace().str(), traces[0].str());
}

// Without validation the fastest tuning record decides; when it is the fallback's own (each
// task's first trial), the task keeps its fallback and does not count as tuned ("8 of 8
// tasks run a tuned schedule" was printed for tasks at exactly their default time).
TEST_F(TwoSchedules, TheFallbacksOwnRecordIsNotATunedSchedule) {
  commit_timings(db, wid, target, {{fallback, 1.0}, {traces[0], 1.5}}, 1000, "local");
  compile::ChosenSchedule c = compile::choose_schedule(dag, target, &db);
  EXPECT_EQ(c.sched.trace().str(), fallback.str());
  EXPECT_FALSE(c.from_db) << c.source;
  EXPECT_NE(c.source.find("fallback"), std::string::npos) << c.source;
  commit_timings(db, wid, target, {{traces[1], 0.5}}, 2000, "local");
  c = compile::choose_schedule(dag, target, &db);
  EXPECT_EQ(c.sched.trace().str(), traces[1].str());
  EXPECT_TRUE(c.from_db) << c.source;
}

}  // namespace
