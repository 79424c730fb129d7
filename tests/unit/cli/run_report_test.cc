// The report of a tuning run (src/cli/run_report.h): records of a run gathered per task into
// curves, and the HTML page drawn from them.
#include "cli/run_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "db/memory_database.h"
#include "support/error.h"
#include "unit/db/db_test_util.h"

namespace tuner::cli {
namespace {

using db::test::kX86;
using db::test::test_error;
using db::test::test_record;
using db::test::test_workload;
using ::testing::HasSubstr;
using ::testing::Not;

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = 0; (p = s.find(what, p)) != std::string::npos; p += what.size()) ++n;
  return n;
}

// A run over two tasks (weights 2 and 1) with three rounds, and a record of another run.
struct Fixture {
  db::MemoryDatabase db;
  int64_t run = 0, w0 = 0, w1 = 0;
  Fixture(bool record_tasks = true) {
    db::Workload a = test_workload(0), b = test_workload(1);
    a.op = "model:conv2d+relu";
    b.op = "model:matmul<add>";
    w0 = db.commit_workload(a);
    w1 = db.commit_workload(b);
    run = db.create_run("model /m/small.onnx", Json{{"target", kX86}, {"trials", 10}});
    int64_t other = db.create_run("op matmul", Json::object());
    int64_t t0 = db.run(run)->started_ms;
    auto rec = [&](db::Record r, int64_t at_ms) {
      r.run_id = run;
      r.created_ms = t0 + at_ms;
      return r;
    };
    // Round 1 (task 0): 4 ms, an error, 3 ms.
    db.commit_round(
        std::vector<db::Record>{rec(test_record(w0, kX86, 0.004, 1), 1000),
                                rec(test_error(w0, kX86, db::MeasureStatus::WrongAnswer, 2), 1000),
                                rec(test_record(w0, kX86, 0.003, 3), 1000)});
    // Round 2 (task 1): a timeout, 1 ms.
    db.commit_round(
        std::vector<db::Record>{rec(test_error(w1, kX86, db::MeasureStatus::RunTimeout, 4), 2000),
                                rec(test_record(w1, kX86, 0.001, 5), 2000)});
    // Round 3 (task 0): 5 ms (no gain), 2 ms.
    db.commit_round(std::vector<db::Record>{rec(test_record(w0, kX86, 0.005, 6), 3500),
                                            rec(test_record(w0, kX86, 0.002, 7), 3500)});
    // Another run's record of task 0 is not part of this report.
    db::Record o = test_record(w0, kX86, 0.0001, 8);
    o.run_id = other;
    db.commit_round(std::vector<db::Record>{o});
    if (record_tasks) {
      Json p{{"model", "small"},
             {"trials", 7},
             {"latency_before_ms", 20.0},
             {"latency_after_ms", 5.0}};
      p["tasks"] = Json::array({{{"workload", a.hash},
                                 {"name", "conv2d+relu"},
                                 {"weight", 2},
                                 {"flops", a.flops},
                                 {"seconds", 2.5},
                                 {"baseline_ms", 8.0}},
                                {{"workload", b.hash},
                                 {"name", "matmul<add>"},
                                 {"weight", 1},
                                 {"flops", b.flops},
                                 {"seconds", 1.0}}});
      db.update_run(run, db::RunState::Finished, p);
    }
  }
};

TEST(RunReport, CurvesPerTaskAndModel) {
  Fixture f;
  RunReport r = load_run_report(f.db, f.run, "t.db");
  EXPECT_EQ(r.model, "small");
  EXPECT_EQ(r.target, kX86);
  EXPECT_TRUE(r.tasks_recorded);
  EXPECT_EQ(r.trials, 7);
  ASSERT_EQ(r.tasks.size(), 2u);
  const ReportTask& t0 = r.tasks[0];
  EXPECT_EQ(t0.name, "conv2d+relu");
  EXPECT_EQ(t0.weight, 2);
  EXPECT_EQ(t0.trials, 5);
  EXPECT_EQ(t0.ok, 4);
  EXPECT_EQ(t0.seconds, 2.5);
  EXPECT_DOUBLE_EQ(t0.baseline, 0.008);
  EXPECT_DOUBLE_EQ(t0.first, 0.004);
  EXPECT_DOUBLE_EQ(t0.best, 0.002);
  EXPECT_EQ(t0.errors.at("WRONG_ANSWER"), 1);
  // Improvements at trials 1, 3 and 5 of the task.
  ASSERT_EQ(t0.curve.size(), 3u);
  EXPECT_EQ(t0.curve[0].trial, 1);
  EXPECT_DOUBLE_EQ(t0.curve[0].seconds, 1.0);
  EXPECT_EQ(t0.curve[1].trial, 3);
  EXPECT_DOUBLE_EQ(t0.curve[1].best, 0.003);
  EXPECT_EQ(t0.curve[2].trial, 5);
  EXPECT_DOUBLE_EQ(t0.curve[2].seconds, 3.5);
  EXPECT_DOUBLE_EQ(t0.curve[2].best, 0.002);
  EXPECT_EQ(r.tasks[1].errors.at("RUN_TIMEOUT"), 1);
  ASSERT_EQ(r.tasks[1].curve.size(), 1u);
  EXPECT_EQ(r.tasks[1].curve[0].trial, 2);
  // The model estimate starts when task 1 has a result (trial 5 of the run): 2 x 3 + 1 ms,
  // then 2 x 2 + 1 ms at trial 7.
  ASSERT_EQ(r.model_curve.size(), 2u);
  EXPECT_EQ(r.model_curve[0].trial, 5);
  EXPECT_DOUBLE_EQ(r.model_curve[0].best, 0.007);
  EXPECT_EQ(r.model_curve[1].trial, 7);
  EXPECT_DOUBLE_EQ(r.model_curve[1].best, 0.005);
}

TEST(RunReport, ModelCurveStartsFromDefaultSchedules) {
  Fixture f;
  Json p = f.db.run(f.run)->progress;
  p["tasks"][1]["baseline_ms"] = 1.5;
  f.db.update_run(f.run, db::RunState::Finished, p);
  RunReport r = load_run_report(f.db, f.run, "t.db");
  // Untuned: 2 x 8 + 1.5 ms; task 0 at 4 then 3 ms; task 1 at 1 ms; task 0 at 2 ms.
  ASSERT_EQ(r.model_curve.size(), 5u);
  EXPECT_EQ(r.model_curve[0].trial, 0);
  EXPECT_DOUBLE_EQ(r.model_curve[0].best, 0.0175);
  EXPECT_DOUBLE_EQ(r.model_curve[1].best, 0.0095);
  EXPECT_EQ(r.model_curve[2].trial, 3);
  EXPECT_DOUBLE_EQ(r.model_curve[2].best, 0.0075);
  EXPECT_DOUBLE_EQ(r.model_curve[3].best, 0.007);
  EXPECT_EQ(r.model_curve[4].trial, 7);
  EXPECT_DOUBLE_EQ(r.model_curve[4].best, 0.005);
}

TEST(RunReport, OlderRunsWithoutTasksUseTheirRecords) {
  Fixture f(false);
  RunReport r = load_run_report(f.db, f.run, "t.db");
  EXPECT_FALSE(r.tasks_recorded);
  ASSERT_EQ(r.tasks.size(), 2u);
  EXPECT_EQ(r.tasks[0].weight, 1);
  EXPECT_EQ(r.trials, 7);
  // Names from the workloads; time from the records' build and run seconds.
  std::vector<std::string> names{r.tasks[0].name, r.tasks[1].name};
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("conv2d+relu", "matmul<add>"));
  EXPECT_GT(r.tasks[0].seconds, 0);
}

TEST(RunReport, UnknownRunIsAUserError) {
  Fixture f;
  EXPECT_THROW(load_run_report(f.db, 99, "t.db"), UserError);
}

TEST(RunReport, HtmlIsSelfContainedWithCharts) {
  Fixture f;
  std::string html = render_report_html(load_run_report(f.db, f.run, "t.db"));
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_THAT(html, HasSubstr(fmt::format("<title>Tuning run {} — small</title>", f.run)));
  // Model charts (2), the all-tasks chart, one per task, time and failures.
  EXPECT_EQ(count(html, "<svg "), 2u + 1u + 2u + 2u);
  EXPECT_THAT(html, HasSubstr("Estimated model latency against trials"));
  EXPECT_THAT(html, HasSubstr("Estimated model latency against wall time"));
  EXPECT_THAT(html, HasSubstr("Wall time spent per task"));
  EXPECT_THAT(html, HasSubstr("Failed candidates per task, by kind"));
  EXPECT_THAT(html, HasSubstr(">WRONG_ANSWER</text>"));
  EXPECT_THAT(html, HasSubstr(">RUN_TIMEOUT</text>"));
  // Task names are escaped everywhere.
  EXPECT_THAT(html, HasSubstr("matmul&lt;add&gt;"));
  EXPECT_THAT(html, Not(HasSubstr("matmul<add>")));
  // Key figures: estimated 7 -> 5 ms, measured 20 -> 5 ms, the default of task 0 was 8 ms
  // (4x of 2 ms).
  EXPECT_THAT(html, HasSubstr("7.000 ms → 5.000 ms"));
  EXPECT_THAT(html, HasSubstr("20.000 ms → 5.000 ms (4.00×)"));
  EXPECT_THAT(html, HasSubstr("<td>4.00×</td>"));
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("http://www.w3.org/1999")));
  EXPECT_THAT(html, Not(HasSubstr("https://")));
}

// The budget shown is the last process's: a run resumed with a larger --trials showed
// "32 / 16" (found by an adversarial test, session 54).
TEST(RunReport, TheBudgetIsTheLastProcesss) {
  Fixture f;
  EXPECT_THAT(render_report_html(load_run_report(f.db, f.run, "t.db")), HasSubstr("7 / 10"));
  Json p = f.db.run(f.run)->progress;
  p["budget"] = 20;
  f.db.update_run(f.run, db::RunState::Finished, p);
  std::string html = render_report_html(load_run_report(f.db, f.run, "t.db"));
  EXPECT_THAT(html, HasSubstr("7 / 20"));
  EXPECT_THAT(html, Not(HasSubstr("7 / 10")));
}

// A run interrupted and resumed later: its wall times and duration are the time worked on
// it (a resume a day later drew a day-long flat line and read "24h00m").
TEST(RunReport, WallTimeLeavesOutTheGapBeforeAResume) {
  Fixture f;
  Json p = f.db.run(f.run)->progress;
  int64_t t0 = f.db.run(f.run)->started_ms;
  // Worked 0-2.2 s, resumed at 3.4 s (after a gap of 1.2 s) until 62.4 s.
  p["sessions"] = Json::array({Json::array({t0, t0 + 2200}), Json::array({t0 + 3400, t0 + 62400})});
  f.db.update_run(f.run, db::RunState::Finished, p);
  RunReport r = load_run_report(f.db, f.run, "t.db");
  ASSERT_EQ(r.sessions.size(), 2u);
  const ReportTask& t0r = r.tasks[0];
  ASSERT_EQ(t0r.curve.size(), 3u);
  EXPECT_DOUBLE_EQ(t0r.curve[0].seconds, 1.0);  // in the first session
  EXPECT_DOUBLE_EQ(t0r.curve[2].seconds, 2.3);  // 0.1 s into the second, at 3.5 s
  EXPECT_DOUBLE_EQ(active_seconds(r, t0 + 3000), 2.2);  // in the gap: where the first ended
  EXPECT_DOUBLE_EQ(run_seconds(r), 61.2);
  EXPECT_THAT(render_report_html(r), HasSubstr("1m01s in 2 sittings"));
  // Without sessions (older runs), from the start to the end.
  p.erase("sessions");
  f.db.update_run(f.run, db::RunState::Finished, p);
  RunReport old = load_run_report(f.db, f.run, "t.db");
  EXPECT_DOUBLE_EQ(old.tasks[0].curve[2].seconds, 3.5);
}

TEST(RunReport, RunWithoutRecords) {
  db::MemoryDatabase db;
  int64_t run = db.create_run("model x", Json::object());
  std::string html = render_report_html(load_run_report(db, run, "t.db"));
  EXPECT_THAT(html, HasSubstr("This run has no records yet."));
  EXPECT_EQ(count(html, "<svg "), 0u);
}

}  // namespace
}  // namespace tuner::cli
