#include <gtest/gtest.h>

#include <map>
#include <set>

#include "costmodel/random_model.h"
#include "db/memory_database.h"
#include "measure/builder.h"
#include "ops/registry.h"
#include "search/multi_task.h"

using namespace tuner;

namespace {

// Times every program by its hash, without running it, and counts how often each was timed.
class CountingRunner : public measure::Runner {
 public:
  std::map<uint64_t, int> times_measured;

  std::vector<measure::MeasureResult> run(const measure::MeasureTask&,
                                          const std::vector<measure::BuiltCandidate>& cands) override {
    std::vector<measure::MeasureResult> out;
    for (const auto& c : cands) {
      measure::MeasureResult r;
      r.status = db::MeasureStatus::Ok;
      r.times = {1e-3 * double(1 + c.program_hash % 997) * (1 + 1e-9 * double(n_++))};
      ++times_measured[c.program_hash];
      out.push_back(r);
    }
    return out;
  }

 private:
  size_t n_ = 0;
};

search::TuneTask tiny_task(const std::string& op, std::vector<std::string> params) {
  auto& def = ops::find_op(op);
  auto p = ops::parse_params(def, params);
  std::string text;
  for (auto& kv : params) text += (text.empty() ? "" : " ") + kv;
  return {def.build(p), op, text, codegen::Target::parse("llvm"), {}};
}

}  // namespace

// Multi-task tuning gives each task many short turns. Each task's search must remember every
// candidate of its earlier turns (failures and slow ones too, not only the best), and a task
// whose space is exhausted must be set aside rather than re-measure what it has.
TEST(MultiTask, NoCandidateIsMeasuredTwiceAndExhaustedTasksStop) {
  std::vector<search::TuneTask> tasks = {tiny_task("matmul", {"m=2", "n=8", "k=2"}),
                                         tiny_task("relu", {"shape=4x8"})};
  db::MemoryDatabase db;
  measure::BuilderOptions bo;
  bo.build.opt_level = 0;  // only the program hashes matter here
  measure::Builder builder(bo);
  CountingRunner runner;
  costmodel::RandomModel model(3);
  search::MultiTuneOptions opts;
  opts.trials = 2000;  // far more than the two spaces hold
  opts.early_stop = 0;
  opts.seed = 3;
  auto p = search::tune_tasks(tasks, {1.0, 1.0}, opts, db, builder, runner, model);

  EXPECT_LT(p.spent, opts.trials) << "the spaces should be exhausted before the budget";
  EXPECT_GT(p.trials[0], 16) << "the matmul task had several turns";
  EXPECT_TRUE(p.done[0] && p.done[1]);
  for (auto& [hash, n] : runner.times_measured) EXPECT_EQ(n, 1) << "program " << hash;
  // Different traces may lower to one program; distinct traces is the database's view.
  db::RecordFilter all;
  std::set<std::pair<int64_t, std::string>> traces;
  int64_t records = 0;
  db.for_each_record(all, [&](const db::Workload&, const db::Record& r) {
    traces.insert({r.workload_id, r.trace});
    ++records;
  });
  EXPECT_EQ(records, p.spent);
  EXPECT_EQ(int64_t(traces.size()), records) << "a trace was measured twice";
}

// A run killed during a task's first turn (only its fallback recorded) and resumed gives that
// task its warm-up turn again; it was counted as a turn had, and a task of small weight then
// waited behind the others.
TEST(MultiTask, AResumedRunRedoesAWarmUpTurnCutShort) {
  std::vector<search::TuneTask> tasks = {tiny_task("matmul", {"m=64", "n=64", "k=64"}),
                                         tiny_task("matmul", {"m=32", "n=64", "k=32"})};
  db::MemoryDatabase db;
  measure::BuilderOptions bo;
  bo.build.opt_level = 0;
  measure::Builder builder(bo);
  CountingRunner runner;
  costmodel::RandomModel model(3);
  search::MultiTuneOptions opts;
  opts.early_stop = 0;
  opts.seed = 3;
  opts.run_id = db.create_run("test", Json::object());
  // Rounds of 8: task 0 has its turn, task 1 is cut off after one trial.
  opts.trials = 9;
  auto first = search::tune_tasks(tasks, {100.0, 1.0}, opts, db, builder, runner, model);
  ASSERT_EQ(first.trials, (std::vector<int>{8, 1}));
  opts.trials = 17;
  auto resumed = search::tune_tasks(tasks, {100.0, 1.0}, opts, db, builder, runner, model);
  EXPECT_EQ(resumed.resumed_trials, 9);
  EXPECT_EQ(resumed.trials, (std::vector<int>{8, 9}));
}
