// Re-measures the schedule compile chooses for every task of a model (the validated one, else
// the best record) next to its fallback schedule, in the same sandbox the tuner uses, the two
// alternating. Tells whether a tuned model's per-task gains still hold (same program, same
// runner) when they do not show end to end.
//
//   build/bench/task_remeasure MODEL.onnx --db tuning_logs/tuning.db [--rounds 3] [--threads 2]
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>

#include "cli/model_common.h"
#include "codegen/default_schedule.h"
#include "codegen/target.h"
#include "compile/schedule_choice.h"
#include "db/sqlite_database.h"
#include "graph/tasks.h"
#include "measure/builder.h"
#include "measure/local_runner.h"
#include "schedule/trace.h"
#include "support/error.h"

using namespace tuner;

int main(int argc, char** argv) {
  CLI::App app{"re-measure a model's best records against the fallback schedules"};
  cli::ModelArgs ma;
  std::string db_path = "tuning_logs/tuning.db";
  int rounds = 3, threads = 2;
  app.add_option("model", ma.model)->required();
  app.add_option("--db", db_path);
  app.add_option("--rounds", rounds);
  app.add_option("--threads", threads);
  CLI11_PARSE(app, argc, argv);
  try {
    graph::Graph g = cli::load_model(ma);
    graph::TaskSet ts = graph::extract_tasks(g, {});
    codegen::Target target = codegen::Target::parse(ma.target);
    auto db = db::SqliteDatabase::open(db_path);
    measure::Builder builder;
    measure::LocalRunnerOptions ro;
    ro.threads = threads;
    ro.give_up_factor = 0;
    measure::LocalRunner runner(ro);
    fmt::print("{:>4} {:<28} {:>9} {:>9} {:>9} {:>7} {:>7}\n", "task", "ops", "db best", "fallback",
               "chosen", "db x", "now x");
    double sum_fb = 0, sum_best = 0;
    for (size_t i = 0; i < ts.tasks.size(); ++i) {
      const auto& task = ts.tasks[i];
      auto w = db->find_workload(task.dag.hash_hex());
      if (!w) continue;
      auto top = db->top_k(w->id, target.str(), 1);
      if (top.empty()) continue;
      std::vector<schedule::Trace> traces = {
          codegen::default_schedule(task.dag, target).trace(),
          compile::choose_schedule(task.dag, target, db.get()).sched.trace()};
      auto built = builder.build(task.dag, traces, target);
      measure::MeasureTask mt{task.dag, target, 1, {}, {}};
      std::vector<double> fb, best;
      for (int r = 0; r < rounds; ++r) {
        auto res = runner.run(mt, built);
        fb.push_back(res[0].median());
        best.push_back(res[1].median());
      }
      double f = *std::min_element(fb.begin(), fb.end());
      double b = *std::min_element(best.begin(), best.end());
      // The first record of a task is its fallback, measured first in the tuning run.
      sum_fb += f * task.weight;
      sum_best += b * task.weight;
      fmt::print("{:>4} {:<28} {:>9.4f} {:>9.4f} {:>9.4f} {:>7.2f} {:>6.2f}x\n", i,
                 task.ops.substr(0, 28), *top[0].median * 1e3, f * 1e3, b * 1e3,
                 f / *top[0].median, f / b);
    }
    fmt::print("weighted sum: fallback {:.3f} ms, chosen {:.3f} ms ({:.2f}x)\n", sum_fb * 1e3,
               sum_best * 1e3, sum_fb / sum_best);
  } catch (const UserError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
