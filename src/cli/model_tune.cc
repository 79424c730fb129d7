// `tuner tune model.onnx --trials N`: tunes every task of a model, rounds given by the task
// scheduler, records in the tuning database; then compiles the model with the best schedules
// and reports the end-to-end latency before and after.
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>

#include "cli/commands.h"
#include "cli/model_common.h"
#include "cli/op_common.h"
#include "cli/tune_view.h"
#include "compile/compile_model.h"
#include "costmodel/features.h"
#include "db/sqlite_database.h"
#include "graph/tasks.h"
#include "measure/builder.h"
#include "measure/local_runner.h"
#include "ops/registry.h"
#include "search/task_scheduler.h"
#include "search/task_tuner.h"
#include "support/error.h"
#include "support/json.h"

namespace tuner::cli {

namespace {

std::atomic<bool> g_stop{false};
void on_sigint(int) { g_stop.store(true); }

struct TuneModelArgs {
  ModelArgs m;
  std::string db = "tuning_logs/tuning.db";
  std::string out;
  std::string cost_model = "xgb";
  int trials = 2000;
  int64_t resume = 0;
  int batch = 64;
  int early_stop = 200;
  int threads = 2;
  uint64_t seed = 0;
  bool no_compile = false, quiet = false, json = false;
};

std::string ms(double s) { return std::isfinite(s) && s > 0 ? fmt::format("{:.3f}", s * 1e3) : "-"; }

double finite_or_zero(double s) { return std::isfinite(s) ? s : 0.0; }

void cmd_tune_model(const TuneModelArgs& a) {
  auto t_start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  };
  codegen::Target target = codegen::Target::parse(a.m.target);
  USER_CHECK(target.runs_on_host())
      << "tuning for " << target.str()
      << " needs a worker on such a machine (remote workers are not available yet)";
  USER_CHECK(a.trials > 0) << "--trials must be positive";
  graph::Graph g = load_model(a.m);
  graph::FuseOptions fo;
  fo.enabled = !a.m.no_fuse;
  graph::TaskSet ts = graph::extract_tasks(g, fo);
  bool chatty = !a.quiet && !a.json;

  // The latency before tuning: every task on its fallback schedule.
  compile::ModelCompileOptions co;
  co.target = target;
  co.fuse = fo;
  co.db_path = "";
  double before = measure_latency(compile::compile_model(g, co), a.threads);
  if (chatty)
    fmt::print(stderr, "tuning {} ({} tasks, {} kernels) on {}: {} trials; untuned latency {} ms\n",
               g.name, ts.tasks.size(), ts.groups.size(), target.str(), a.trials, ms(before));

  std::filesystem::path dbp(a.db);
  if (dbp.has_parent_path()) std::filesystem::create_directories(dbp.parent_path());
  auto db = db::SqliteDatabase::open(a.db);
  costmodel::XGBModel* xgb = nullptr;
  auto model = make_cost_model(a.cost_model, a.seed, false, &xgb);
  if (xgb) {
    // Transfer: every record of the target whose DAG we can rebuild (this model's tasks, ops).
    auto rebuild = [&](const db::Workload& w) -> std::optional<te::ComputeDAG> {
      for (const auto& t : ts.tasks)
        if (t.dag.hash_hex() == w.hash) return t.dag;
      return rebuild_op_dag(w);
    };
    size_t n = search::warm_start_model(*xgb, *db, target.str(), rebuild);
    if (n && chatty) fmt::print(stderr, "cost model: starting from {} records of {}\n", n, target.str());
  }
  measure::Builder builder;
  measure::LocalRunnerOptions ro;
  ro.threads = a.threads;
  measure::LocalRunner runner(ro);
  // The run: the same command (model, target, budget, seed) continues an unfinished run
  // (interrupted, or killed while running), counting the trials it already spent.
  Json run_args{{"target", target.str()}, {"trials", a.trials}, {"seed", a.seed},
                {"fuse", fo.enabled}};
  std::string what = "model " + std::filesystem::absolute(a.m.model).lexically_normal().string();
  int64_t run_id = 0;
  if (a.resume > 0) {
    auto r = db->run(a.resume);
    USER_CHECK(r) << "no tuning run " << a.resume << " in " << a.db;
    USER_CHECK(r->what == what) << "run " << a.resume << " tuned " << r->what << ", not this model";
    run_id = r->id;
  } else {
    for (const auto& r : db->runs())
      if (r.what == what && r.args == run_args && r.state != db::RunState::Finished) {
        run_id = r.id;
        break;
      }
  }
  bool resumed = run_id != 0;
  // The run's progress (see progress_json below) survives a resume: the report reads it.
  Json stored = resumed ? db->run(run_id)->progress : Json::object();
  if (!resumed) run_id = db->create_run(what, run_args);

  std::vector<search::TuneTask> tasks;
  std::vector<double> weights;
  for (size_t i = 0; i < ts.tasks.size(); ++i) {
    const auto& t = ts.tasks[i];
    tasks.push_back({t.dag, "model:" + t.ops, "model=" + g.name + " task=" + std::to_string(i),
                     target, ops::random_inputs(t.dag, a.seed + i, -1.0, 1.0, 0, 1)});
    weights.push_back(t.weight);
  }
  search::TaskScheduler sched(weights);
  // Rounds small enough that the warm-up gives every task a turn within half the budget.
  int batch = std::clamp(a.trials / std::max<int>(1, 2 * int(tasks.size())), 8, a.batch);
  std::vector<double> best(tasks.size(), std::numeric_limits<double>::infinity());
  std::vector<double> baseline(tasks.size(), 0);
  std::vector<int> since_improvement(tasks.size(), 0);
  std::map<std::string, int> errors;
  // Wall seconds spent in each task's rounds, kept in the run for `tuner report`.
  std::vector<double> seconds(tasks.size(), 0);
  int spent = 0, round = 0;
  if (resumed) {
    if (stored.contains("tasks") && stored["tasks"].is_array())
      for (const auto& t : stored["tasks"])
        for (size_t i = 0; i < tasks.size(); ++i)
          if (t.value("workload", "") == tasks[i].dag.hash_hex()) {
            seconds[i] = t.value("seconds", 0.0);
            baseline[i] = t.value("baseline_ms", 0.0) * 1e-3;
          }
    for (size_t i = 0; i < tasks.size(); ++i) {
      auto w = db->find_workload(tasks[i].dag.hash_hex());
      if (!w) continue;
      db::RecordFilter f;
      f.workload_id = w->id;
      f.target = target.str();
      f.run_id = run_id;
      int n = int(db->count_records(f));
      if (n == 0) continue;
      auto top = db->top_k(w->id, target.str(), 1);
      if (!top.empty()) best[i] = *top[0].median;
      sched.update(int(i), n, best[i], false);
      spent += n;
      round += (n + batch - 1) / batch;
    }
    if (chatty)
      fmt::print(stderr, "resuming run {}: {} of {} trials already spent\n", run_id, spent, a.trials);
  }
  // What the run keeps in the database after every round: the tasks (workload, operators,
  // weight) tie the run's records to the model, so `tuner report` can draw its curves.
  auto progress_json = [&] {
    Json tj = Json::array();
    for (size_t i = 0; i < tasks.size(); ++i)
      tj.push_back({{"workload", tasks[i].dag.hash_hex()},
                    {"name", ts.tasks[i].ops},
                    {"weight", ts.tasks[i].weight},
                    {"flops", tasks[i].dag.flops()},
                    {"trials", sched.trials(int(i))},
                    {"seconds", seconds[i]},
                    {"baseline_ms", baseline[i] * 1e3},
                    {"best_ms", finite_or_zero(best[i]) * 1e3}});
    Json p = stored;
    p["model"] = g.name;
    p["trials"] = spent;
    p["tasks"] = std::move(tj);
    if (!p.contains("latency_before_ms")) p["latency_before_ms"] = before * 1e3;
    return p;
  };
  const int spent_at_start = spent;
  const double loop_start = elapsed();
  auto snapshot = [&](int current) {
    TuneSnapshot s;
    s.model = g.name;
    s.target = target.str();
    s.trials = spent;
    s.budget = a.trials;
    s.elapsed_seconds = elapsed();
    if (spent > spent_at_start)
      s.seconds_per_trial = (elapsed() - loop_start) / (spent - spent_at_start);
    s.current = current;
    s.errors = errors;
    for (size_t i = 0; i < tasks.size(); ++i)
      s.tasks.push_back({ts.tasks[i].ops, double(ts.tasks[i].weight), tasks[i].dag.flops(),
                         sched.trials(int(i)), finite_or_zero(best[i]), baseline[i],
                         sched.done(int(i))});
    return s;
  };
  db->update_run(run_id, db::RunState::Running, progress_json());
  // A terminal gets a view redrawn in place; a log gets one line per round.
  bool live = chatty && isatty(2);
  LiveView view(stderr);
  if (live) view.draw(snapshot(-1), true);
  g_stop = false;
  auto old = std::signal(SIGINT, on_sigint);
  try {
    while (spent < a.trials && !g_stop) {
      int i = sched.next();
      if (i < 0) break;
      search::TuneOptions opts;
      opts.trials = std::min(batch, a.trials - spent);
      opts.batch = batch;
      opts.early_stop = 0;
      opts.seed = a.seed * 1000003 + uint64_t(round);
      opts.space.vector_lanes = target.vector_lanes();
      opts.space.num_cores = a.threads;
      opts.run_id = run_id;
      double round_start = elapsed();
      search::TuneResult r = search::tune_task(tasks[size_t(i)], opts, *db, builder, runner,
                                               *model, {}, [] { return g_stop.load(); });
      seconds[size_t(i)] += elapsed() - round_start;
      const auto& p = r.progress;
      spent += p.trials;
      ++round;
      if (p.baseline_seconds > 0) baseline[size_t(i)] = p.baseline_seconds;
      bool improved = p.best_seconds > 0 && p.best_seconds < best[size_t(i)] * 0.99;
      if (p.best_seconds > 0) best[size_t(i)] = std::min(best[size_t(i)], p.best_seconds);
      for (auto& [k, v] : p.errors) errors[k] += v;
      // A task whose last early_stop trials brought no improvement is finished.
      since_improvement[size_t(i)] = improved ? 0 : since_improvement[size_t(i)] + p.trials;
      bool finished = p.trials == 0 || (a.early_stop > 0 && since_improvement[size_t(i)] >= a.early_stop);
      sched.update(i, p.trials, best[size_t(i)], finished);
      db->update_run(run_id, db::RunState::Running, progress_json());
      if (live) view.draw(snapshot(i), spent >= a.trials);
      else if (chatty) fmt::print(stderr, "{}\n", render_line(snapshot(i)));
    }
  } catch (...) {
    std::signal(SIGINT, old);
    db->update_run(run_id, db::RunState::Failed, progress_json());
    throw;
  }
  std::signal(SIGINT, old);
  // The summary below repeats the table when it goes to the same terminal.
  if (live && isatty(1)) view.clear();
  Json final_progress = progress_json();
  db::RunState end_state = g_stop ? db::RunState::Interrupted : db::RunState::Finished;
  db->update_run(run_id, end_state, final_progress);
  if (xgb && xgb->trained())
    db->save_cost_model({target.str(), costmodel::kFeatureVersion, "xgboost", xgb->save(),
                         int64_t(xgb->num_programs())});

  // Compile with the best records and measure again.
  double after = 0;
  std::string out;
  if (!a.no_compile) {
    co.db_path = a.db;
    compile::CompileReport rep;
    runtime::Artifact art = compile::compile_model(g, co, &rep);
    out = a.out.empty() ? std::filesystem::path(a.m.model).stem().string() + ".tuner" : a.out;
    art.save(out);
    after = measure_latency(std::move(art), a.threads);
    final_progress["latency_after_ms"] = after * 1e3;
    db->update_run(run_id, end_state, final_progress);
  }
  if (a.json) {
    Json tj = Json::array();
    for (size_t i = 0; i < tasks.size(); ++i)
      tj.push_back({{"task", i},
                    {"ops", ts.tasks[i].ops},
                    {"weight", ts.tasks[i].weight},
                    {"trials", sched.trials(int(i))},
                    {"baseline_ms", baseline[i] * 1e3},
                    {"best_ms", std::isfinite(best[i]) ? best[i] * 1e3 : 0.0}});
    Json e = Json::object();
    for (auto& [k, v] : errors) e[k] = v;
    fmt::print("{}\n", Json{{"model", g.name}, {"target", target.str()}, {"trials", spent},
                            {"run", run_id}, {"resumed", resumed},
                            {"seconds", elapsed()}, {"interrupted", g_stop.load()},
                            {"latency_before_ms", before * 1e3}, {"latency_after_ms", after * 1e3},
                            {"speedup", after > 0 ? before / after : 0.0}, {"artifact", out},
                            {"tasks", tj}, {"errors", e}}
                           .dump());
    return;
  }
  fmt::print("{}: {} trials in {:.0f} s{}\n", g.name, spent, elapsed(),
             g_stop ? " (interrupted; rerun to continue)" : "");
  for (const auto& line : render_summary(snapshot(-1))) fmt::print("{}\n", line);
  fmt::print("records in {} (tuning run {}; `tuner report {}` draws its curves)\n", a.db, run_id,
             run_id);
  if (!a.no_compile) {
    fmt::print("wrote {}\n", out);
    fmt::print("end-to-end latency: {} ms untuned -> {} ms tuned: speed-up {:.2f}x\n", ms(before),
               ms(after), before / after);
  }
}

}  // namespace

void add_model_tune_command(CLI::App& app) {
  auto a = std::make_shared<TuneModelArgs>();
  CLI::App* cmd = app.add_subcommand(
      "tune", "tune every task of an ONNX model, then compile it with the best schedules");
  add_model_options(cmd, a->m);
  cmd->add_option("--trials", a->trials, "measured candidates in all")->capture_default_str();
  cmd->add_option("--db", a->db, "tuning database")->capture_default_str();
  cmd->add_option("-o,--output", a->out, "artifact to write (default: MODEL.tuner)");
  cmd->add_option("--seed", a->seed, "seed of all randomness")->capture_default_str();
  cmd->add_option("--resume", a->resume,
                  "continue tuning run RUN (default: the same command's unfinished run, if any)");
  cmd->add_option("--threads", a->threads, "threads of the measured kernels")->capture_default_str();
  cmd->add_option("--batch", a->batch, "candidates per measurement round")->capture_default_str();
  cmd->add_option("--early-stop", a->early_stop,
                  "a task stops after this many trials without improvement")
      ->capture_default_str();
  cmd->add_option("--cost-model", a->cost_model, "xgb or random")->capture_default_str();
  cmd->add_flag("--no-compile", a->no_compile, "only tune; do not compile the model");
  cmd->add_flag("--quiet", a->quiet, "no progress lines");
  cmd->add_flag("--json", a->json, "print one JSON object at the end");
  cmd->callback([a] { cmd_tune_model(*a); });
}

}  // namespace tuner::cli
