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
#include <limits>

#include "cli/commands.h"
#include "cli/model_common.h"
#include "cli/model_validate.h"
#include "cli/op_common.h"
#include "cli/run_owner.h"
#include "cli/tune_view.h"
#include "compile/compile_model.h"
#include "compile/schedule_choice.h"
#include "costmodel/features.h"
#include "db/sqlite_database.h"
#include "db/timestamp.h"
#include "graph/tasks.h"
#include "measure/builder.h"
#include "measure/local_runner.h"
#include "measure/measure_option.h"
#include "ops/registry.h"
#include "search/multi_task.h"
#include "search/task_tuner.h"
#include "search/validate.h"
#include "support/atomic_file.h"
#include "support/cli_main.h"
#include "support/error.h"
#include "support/hash.h"
#include "support/json.h"
#include "support/stop_signal.h"
#include "support/thread_count.h"

namespace tuner::cli {

namespace {

struct TuneModelArgs {
  ModelArgs m;
  std::string db = "tuning_logs/tuning.db";
  std::string out;
  std::string cost_model = "xgb";
  bool cold = true;  // --measure
  int trials = 2000;
  int64_t resume = 0;
  bool trials_given = false;  // --trials was on the command line
  int batch = 64;
  int early_stop = 200;
  int threads = 0;  // 0: default_num_threads()
  int validate = 3;
  uint64_t seed = 0;
  bool no_compile = false, quiet = false, json = false;
  RemoteOptions remote;
};

double finite_or_zero(double s) { return std::isfinite(s) ? s : 0.0; }

void cmd_tune_model(const TuneModelArgs& a) {
  // Options that would be ignored without a word.
  USER_CHECK(!a.no_compile || a.out.empty())
      << "-o names the compiled model, and --no-compile compiles none: drop one of them";
  if (!a.remote.server.empty()) {
    USER_CHECK(a.out.empty() && !a.resume)
        << (a.out.empty() ? "--resume" : "-o")
        << " is for a local tune: a server's job resumes by itself, and compiling is "
           "`tuner compile` with the records (`tuner db export --server ...`)";
    RemoteTuneArgs r;
    r.remote = a.remote;
    r.model = a.m.model;
    r.input_shapes = a.m.input_shapes;
    r.no_fuse = a.m.no_fuse;
    r.winograd = a.m.winograd;
    r.target = a.m.target;
    r.trials = a.trials;
    r.batch = a.batch;
    r.early_stop = a.early_stop;
    r.seed = a.seed;
    r.json = a.json;
    r.quiet = a.quiet;
    remote_tune(r);
    return;
  }
  auto t_start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  };
  codegen::Target target = codegen::Target::parse(a.m.target);
  check_local_tuning(target);
  protect_input_file(a.m.model, "model being read");
  db::check_database_path(a.db);  // before any work
  protect_input_file(a.db, "tuning database");
  // The artifact's path, checked before any tuning (a folder of that name failed only after it).
  std::string out =
      a.no_compile ? "" : a.out.empty() ? std::filesystem::path(a.m.model).stem().string() + ".tuner" : a.out;
  if (!out.empty()) check_output_path(out);
  USER_CHECK(a.trials > 0) << "--trials must be positive";
  int trials = a.trials;  // --resume without --trials: the run's own budget
  // --resume names a run of an existing database (a mistyped --db was created, folders too).
  std::error_code ec;
  USER_CHECK(a.resume <= 0 || std::filesystem::exists(a.db, ec))
      << "no tuning database " << a.db << " (--resume " << a.resume << " continues a run recorded in it)";
  graph::Graph g = load_model(a.m);
  graph::FuseOptions fo;
  fo.enabled = !a.m.no_fuse;
  graph::TaskSet ts = graph::extract_tasks(g, fo);
  USER_CHECK(!ts.tasks.empty()) << g.name << " has no operator to tune (its outputs are inputs "
                                << "or constants): `tuner compile` builds it as it is";
  bool chatty = !a.quiet && !a.json;

  // The latency before tuning: every task on its fallback schedule.
  compile::ModelCompileOptions co;
  co.target = target;
  co.fuse = fo;
  co.db_path = "";
  auto db = db::SqliteDatabase::open(a.db);  // creates the folder
  // The run's identity; --resume RUN is checked against it before anything is printed.
  // The tasks, not only the model's path: another model written over the same file is
  // another run (it was resumed, mixing the two models' records in one run).
  uint64_t tasks_hash = 0;
  for (const auto& t : ts.tasks)
    tasks_hash = hash_combine(hash_combine(tasks_hash, t.dag.structural_hash()), uint64_t(t.weight));
  Json run_args{{"target", target.str()}, {"trials", trials}, {"seed", a.seed},
                {"fuse", fo.enabled}, {"tasks", fmt::format("{:016x}", tasks_hash)}};
  std::string what = "model " + std::filesystem::absolute(a.m.model).lexically_normal().string();
  int64_t run_id = 0;
  if (a.resume > 0) {
    auto r = db->run(a.resume);
    USER_CHECK(r) << "no tuning run " << a.resume << " in " << a.db;
    // Its records and tasks must be this command's: the same target and fusion.
    auto arg = [&](const char* k) {
      return r->args.is_object() && r->args.contains(k) ? r->args[k] : Json();
    };
    USER_CHECK(arg("target") == run_args["target"])
        << "run " << a.resume << " tuned for "
        << (arg("target").is_string() ? arg("target").get<std::string>() : "?") << ", not for "
        << target.str() << " (give its --target to resume it)";
    USER_CHECK(arg("fuse") == run_args["fuse"])
        << "run " << a.resume << " tuned with fusion " << (arg("fuse") == true ? "on" : "off")
        << "; resume it with the same --no-fuse setting";
    // Its tasks are this model's (a copy elsewhere resumes it too), or, for a run of an
    // earlier version that kept no tasks hash, its path is this model's.
    bool same_tasks = r->args.is_object() && r->args.contains("tasks")
                          ? r->args["tasks"] == run_args["tasks"]
                          : r->what == what;
    USER_CHECK(same_tasks) << "run " << a.resume << " tuned " << r->what.substr(r->what.find(' ') + 1)
                           << (r->what == what ? " when its tasks were other than this model's"
                                               : ", not this model");
    USER_CHECK(!process_alive(r->progress.value("owner", Json())))
        << "run " << a.resume << " is being tuned by process "
        << r->progress["owner"].value("pid", 0) << " on this machine; wait for it or stop it";
    run_id = r->id;
    // Its own budget unless --trials says otherwise (it went on to the default 2000).
    if (!a.trials_given && arg("trials").is_number_integer()) trials = arg("trials").get<int>();
  }
  runtime::Artifact untuned = compile::compile_model(g, co);
  double before = measure_latency(untuned, a.threads);
  if (chatty)
    fmt::print(stderr, "tuning {} ({} tasks, {} kernels) on {}: {} trials; untuned latency {} ms\n",
               g.name, ts.tasks.size(), ts.groups.size(), target.str(), trials,
               format_ms(before));

  costmodel::XGBModel* xgb = nullptr;
  auto model = make_cost_model(a.cost_model, a.seed, false, &xgb);
  if (xgb) {
    // Transfer: every record of the target whose DAG we can rebuild (this model's tasks, ops).
    std::vector<te::ComputeDAG> dags;
    for (const auto& t : ts.tasks) dags.push_back(t.dag);
    size_t n = search::warm_start_model(*xgb, *db, target.str(),
                                        [&](const db::Workload& w) { return rebuild_dag(w, dags); });
    if (n && chatty) fmt::print(stderr, "cost model: starting from {} records of {}\n", n, target.str());
  }
  measure::Builder builder;
  measure::LocalRunnerOptions ro;
  ro.threads = a.threads;
  ro.cold_calls = a.cold;
  measure::LocalRunner runner(ro);
  // The same command (model, target, budget, seed, tasks) continues an unfinished run
  // (interrupted, or killed while running), counting the trials it already spent.
  if (a.resume <= 0) {
    int64_t finished = 0, busy = 0, changed = 0;
    for (const auto& r : db->runs()) {
      if (r.what == what && r.state != db::RunState::Finished && r.args.is_object() &&
          r.args.contains("tasks") && r.args["tasks"] != run_args["tasks"]) {
        Json other = r.args;
        other["tasks"] = run_args["tasks"];
        if (other == run_args) changed = r.id;  // this command, when the file held another model
      }
      if (r.what != what || r.args != run_args) continue;
      if (r.state != db::RunState::Finished) {
        // Another `tuner tune` of this machine is working on it: this one starts its own.
        if (process_alive(r.progress.value("owner", Json()))) {
          busy = r.id;
          continue;
        }
        run_id = r.id;
        break;
      }
      finished = r.id;
    }
    if (!run_id && changed && chatty)
      fmt::print(stderr, "run {} tuned another model at this path (its tasks differ); this is a new run\n",
                 changed);
    if (!run_id && busy && chatty)
      fmt::print(stderr,
                 "run {} of this command is being tuned by another process; this is a "
                 "new run\n",
                 busy);
    // The same command again after it finished tunes further: say so, since an
    // interrupted one would resume instead.
    if (!run_id && finished && chatty)
      fmt::print(stderr, "run {} of this command finished; this new run measures {} more trials "
                 "(schedules already in {} are not measured again)\n", finished, trials, a.db);
  }
  bool resumed = run_id != 0;
  // The run's progress (see progress_json below) survives a resume: the report reads it.
  Json stored = resumed ? db->run(run_id)->progress : Json::object();
  if (!resumed) run_id = db->create_run(what, run_args);
  // The spans of time processes worked on the run, this one's last: the report's durations
  // and wall-time axes leave out the gaps between an interruption and its resume.
  const int64_t session_start = db::now_ms();
  auto sessions_now = [&] { return run_sessions(stored, session_start); };

  std::vector<search::TuneTask> tasks;
  std::vector<double> weights;
  for (size_t i = 0; i < ts.tasks.size(); ++i) {
    const auto& t = ts.tasks[i];
    tasks.push_back({t.dag, db::model_task_op(t.ops), db::model_task_params(g.name, i), target,
                     graph::task_inputs(g, ts, i, a.seed + i)});
    weights.push_back(t.weight);
  }
  search::MultiTuneOptions mo;
  mo.trials = trials;
  mo.batch = a.batch;
  mo.early_stop = a.early_stop;
  mo.seed = a.seed;
  mo.num_cores = a.threads;
  mo.run_id = run_id;
  // The state shown and kept: the last round's progress plus what an earlier process of a
  // resumed run stored (its wall seconds and default-schedule times per task).
  search::MultiTuneProgress prog;
  prog.budget = trials;
  prog.best.assign(tasks.size(), std::numeric_limits<double>::infinity());
  prog.baseline.assign(tasks.size(), 0);
  prog.trials.assign(tasks.size(), 0);
  prog.seconds.assign(tasks.size(), 0);
  prog.done.assign(tasks.size(), false);
  std::vector<double> stored_seconds(tasks.size(), 0), stored_baseline(tasks.size(), 0);
  if (resumed && stored.contains("tasks") && stored["tasks"].is_array())
    for (const auto& t : stored["tasks"])
      for (size_t i = 0; i < tasks.size(); ++i)
        if (t.value("workload", "") == tasks[i].dag.hash_hex()) {
          stored_seconds[i] = t.value("seconds", 0.0);
          stored_baseline[i] = t.value("baseline_ms", 0.0) * 1e-3;
        }
  auto seconds_of = [&](size_t i) { return stored_seconds[i] + prog.seconds[i]; };
  auto baseline_of = [&](size_t i) {
    return prog.baseline[i] > 0 ? prog.baseline[i] : stored_baseline[i];
  };
  // What the run keeps in the database after every round: the tasks (workload, operators,
  // weight) tie the run's records to the model, so `tuner report` can draw its curves.
  const Json owner = this_process();
  auto progress_json = [&] {
    Json tj = Json::array();
    for (size_t i = 0; i < tasks.size(); ++i)
      tj.push_back({{"workload", tasks[i].dag.hash_hex()},
                    {"name", ts.tasks[i].ops},
                    {"weight", ts.tasks[i].weight},
                    {"flops", tasks[i].dag.flops()},
                    {"trials", prog.trials[i]},
                    {"seconds", seconds_of(i)},
                    {"baseline_ms", baseline_of(i) * 1e3},
                    {"best_ms", finite_or_zero(prog.best[i]) * 1e3}});
    Json p = stored;
    p["model"] = g.name;
    p["trials"] = prog.spent;
    p["budget"] = trials;  // this process's: a resume may give another --trials
    p["owner"] = owner;
    p["sessions"] = sessions_now();
    p["tasks"] = std::move(tj);
    if (!p.contains("latency_before_ms")) p["latency_before_ms"] = before * 1e3;
    return p;
  };
  int spent_at_start = -1;
  double loop_start = 0;
  auto snapshot = [&](int current) {
    TuneSnapshot s;
    s.model = g.name;
    s.target = target.str();
    s.trials = prog.spent;
    s.budget = trials;
    s.elapsed_seconds = elapsed();
    if (spent_at_start >= 0 && prog.spent > spent_at_start)
      s.seconds_per_trial = (elapsed() - loop_start) / (prog.spent - spent_at_start);
    s.current = current;
    s.errors = prog.errors;
    for (size_t i = 0; i < tasks.size(); ++i)
      s.tasks.push_back({ts.tasks[i].ops, double(ts.tasks[i].weight), tasks[i].dag.flops(),
                         prog.trials[i], finite_or_zero(prog.best[i]), baseline_of(i),
                         bool(prog.done[i])});
    return s;
  };
  db->update_run(run_id, db::RunState::Running, progress_json());
  // A terminal gets a view redrawn in place; a log gets one line per round.
  bool live = chatty && isatty(2);
  LiveView view(stderr);
  if (live) view.draw(snapshot(-1), true);
  bool resume_printed = false;
  // Once, at the first round, or after tuning when every trial was spent before.
  auto say_resumed = [&](const search::MultiTuneProgress& p) {
    if (chatty && !resume_printed && p.resumed_trials > 0 && !live)
      fmt::print(stderr, "resuming run {}: {} of {} trials already spent\n", run_id,
                 p.resumed_trials, trials);
    resume_printed = true;
  };
  loop_start = elapsed();
  auto on_round = [&](const search::MultiTuneProgress& p) {
    prog = p;
    if (spent_at_start < 0) spent_at_start = p.spent - p.trials[size_t(p.last_task)];
    db->update_run(run_id, db::RunState::Running, progress_json());
    if (!chatty) return;
    say_resumed(p);
    if (live) view.draw(snapshot(p.last_task), p.spent >= trials);
    else fmt::print(stderr, "{}\n", render_line(snapshot(p.last_task)));
  };
  // Per task, its fallback and fastest schedule measured again in turn after tuning: what the
  // summary shows when there is such a pair (the fallback's first time and the run's best
  // record come from different minutes of a noisy machine).
  std::vector<std::optional<compile::ValidatedTimes>> validated(tasks.size());
  // Ctrl-C or SIGTERM: the round ends, and what it measured stays (rerun to continue). Kept
  // to the end: one during the in-model timing, compile or final timing stops after that
  // step and the run stays resumable (the default action killed it, its run "finished").
  std::optional<StopSignals> stop_signals(std::in_place);
  try {
    prog = search::tune_tasks(tasks, weights, mo, *db, builder, runner, *model, on_round,
                              StopSignals::requested);
    say_resumed(prog);
    // The winner's curse: measure each task's fastest schedules again, with its fallback, so
    // compile chooses by repeated measurements (search/validate.h).
    if (!StopSignals::requested() && a.validate > 0) {
      if (live && isatty(1)) view.clear();  // the summary repeats it
      search::ValidateOptions vo;
      vo.top = a.validate;
      if (chatty)
        fmt::print(stderr, "validating: each task's {} fastest schedules and its fallback, {} times in turn\n",
                   vo.top, vo.rounds);
      search::validate_best(tasks, vo, *db, builder, runner, {}, StopSignals::requested);
      for (size_t i = 0; i < tasks.size() && !StopSignals::requested(); ++i)
        validated[i] = compile::validated_times(tasks[i].dag, target, *db);
    }
  } catch (...) {
    stop_signals.reset();
    record_failed_run(*db, run_id, progress_json());
    throw;
  }
  // The summary below repeats the table when it goes to the same terminal.
  if (live && isatty(1)) view.clear();
  const int spent = prog.spent;
  // Stopped while tuning: the best so far is still compiled and timed, as before.
  const bool stopped_tuning = StopSignals::requested();
  db->update_run(run_id, stopped_tuning ? db::RunState::Interrupted : db::RunState::Running,
                 progress_json());
  if (xgb && xgb->trained())
    db->save_cost_model({target.str(), costmodel::kFeatureVersion, "xgboost", xgb->save(),
                         int64_t(xgb->num_programs())});
  // A signal after tuning: the steps left are skipped.
  auto stopped_late = [&] { return !stopped_tuning && StopSignals::requested(); };

  // Compile with the best records and measure again.
  double after = 0;
  bool compiled = false;
  std::optional<std::pair<double, double>> speedup_range;  // over paired rounds: noise
  size_t rounds = 0;
  compile::CompileReport rep;
  Json final_progress = progress_json();
  // Each step only while no signal came after tuning.
  auto compile_and_time = [&] {
    co.db_path = a.db;
    if (!stopped_tuning && a.validate > 0) {
      if (chatty)
        fmt::print(stderr, "timing each task's {} validated schedules and its fallback inside the model\n",
                   a.validate);
      InModelResult r = validate_in_model(g, co, untuned, *db, a.threads, a.validate);
      if (chatty)
        fmt::print(stderr,
                   "in the model: of {} tasks, {} keep the fallback (no schedule {} % faster "
                   "there), {} take another than the sandbox's fastest (kernel sums: fallbacks "
                   "{:.3f} ms, sandbox choices {:.3f} ms, compile's choices {:.3f} ms)\n",
                   r.compared, r.fallback_wins, int(compile::kInModelMargin * 100),
                   r.lower_rank_wins, r.fallback_ms, r.chosen_ms,
                   r.best_ms);
    }
    if (stopped_late()) return;
    runtime::Artifact art = compile::compile_model(g, co, &rep);
    try {
      art.save(out);
    } catch (const UserError& e) {  // a full disk: say where the tuning is
      USER_ERROR() << e.what() << "; the tuning is in " << a.db << " (`tuner compile " << a.m.model
                   << " --db " << a.db << " -o FILE` builds the model with it)";
    }
    compiled = true;
    if (stopped_late()) return;
    // Both again, in turn: the machine's load may have changed since the first measurement.
    std::vector<runtime::Artifact> pair;
    pair.push_back(std::move(untuned));
    pair.push_back(std::move(art));
    std::vector<TurnLatency> lat = measure_latencies(std::move(pair), a.threads);
    before = lat[0].median;
    after = lat[1].median;
    speedup_range = ratio_range(lat[0], lat[1]);
    rounds = lat[0].per_round.size();
    // Both from this process: a resumed run's report compares like with like (the first
    // process's untuned time against a later one's tuned time read 1.65x for 1.00x).
    final_progress["latency_before_ms"] = before * 1e3;
    final_progress["latency_after_ms"] = after * 1e3;
  };
  try {
    if (!a.no_compile) compile_and_time();
  } catch (...) {
    stop_signals.reset();
    final_progress["sessions"] = sessions_now();
    record_failed_run(*db, run_id, final_progress);
    throw;
  }
  const bool interrupted = StopSignals::requested();
  const db::RunState end_state = interrupted ? db::RunState::Interrupted : db::RunState::Finished;
  final_progress["sessions"] = sessions_now();  // compile and timing included
  db->update_run(run_id, end_state, final_progress);
  if (a.json) {
    Json tj = Json::array();
    for (size_t i = 0; i < tasks.size(); ++i)
      tj.push_back({{"task", i},
                    {"ops", ts.tasks[i].ops},
                    {"weight", ts.tasks[i].weight},
                    {"trials", prog.trials[i]},
                    {"baseline_ms", ms_or_null(baseline_of(i))},
                    {"best_ms", ms_or_null(prog.best[i])}});
    for (size_t i = 0; i < tasks.size(); ++i)
      if (validated[i]) {
        tj[i]["validated_baseline_ms"] = validated[i]->fallback * 1e3;
        tj[i]["validated_best_ms"] = validated[i]->best * 1e3;
      }
    Json e = Json::object();
    for (auto& [k, v] : prog.errors) e[k] = v;
    fmt::print("{}\n", Json{{"model", g.name},
                            {"target", target.str()},
                            {"trials", spent},
                            {"run", run_id},
                            {"resumed", resumed},
                            {"seconds", elapsed()},
                            {"interrupted", interrupted},
                            {"latency_before_ms", before * 1e3},
                            // null when nothing was compiled and timed (--no-compile)
                            {"latency_after_ms", after > 0 ? Json(after * 1e3) : Json()},
                            {"speedup", after > 0 ? Json(before / after) : Json()},
                            {"speedup_p10", speedup_range ? Json(speedup_range->first) : Json()},
                            {"speedup_p90", speedup_range ? Json(speedup_range->second) : Json()},
                            {"artifact", compiled ? Json(out) : Json()},
                            {"tasks_tuned", rep.tasks_from_db},
                            {"tasks", tj},
                            {"errors", e}}
                           .dump());
    return;
  }
  fmt::print("{}: {} trials in {:.0f} s{}\n", g.name, spent, elapsed(),
             interrupted ? " (interrupted; rerun to continue)" : "");
  TuneSnapshot summary = snapshot(-1);
  int shown_validated = 0;
  for (size_t i = 0; i < tasks.size(); ++i)
    if (validated[i]) {
      summary.tasks[i].baseline = validated[i]->fallback;
      summary.tasks[i].best = validated[i]->best;
      ++shown_validated;
    }
  if (shown_validated == int(tasks.size()))
    fmt::print("default and best ms: the fallback and the fastest schedules measured again, in "
               "turn, after tuning\n");
  else if (shown_validated > 0)
    fmt::print("default and best ms: for {} of {} tasks the fallback and the fastest schedules "
               "measured again, in turn, after tuning; for the others the fallback's first "
               "time and the best record\n",
               shown_validated, tasks.size());
  for (const auto& line : render_summary(summary)) fmt::print("{}\n", line);
  fmt::print("records in {} (tuning run {}; `tuner report {}` draws its curves)\n", a.db, run_id,
             run_id);
  if (compiled) fmt::print("wrote {}\n", out);
  if (after > 0) {
    // With every task on its fallback the two artifacts run the same code: say so, or a
    // ratio of 0.99x reads as if tuning had made the model slower.
    if (rep.tasks_from_db == 0)
      fmt::print("every task keeps its fallback schedule (no tuned one was faster in the model): "
                 "the tuned model is the untuned one, and their ratio below is measurement noise\n");
    else
      fmt::print("{} of {} tasks run a tuned schedule, the others their fallback\n", rep.tasks_from_db, rep.tasks);
    // The spread of the rounds' ratios says how much of the speed-up is the machine's noise.
    std::string spread =
        speedup_range ? fmt::format(" (per round {:.2f}-{:.2f}x: 10th-90th percentile of {})",
                                    speedup_range->first, speedup_range->second, rounds)
                      : "";
    fmt::print("end-to-end latency: {} ms untuned -> {} ms tuned: speed-up {:.2f}x{}\n",
               format_ms(before), format_ms(after), before / after, spread);
  }
}

}  // namespace

void add_model_tune_command(CLI::App& app) {
  auto a = std::make_shared<TuneModelArgs>();
  CLI::App* cmd = app.add_subcommand(
      "tune", "tune every task of an ONNX model, then compile it with the best schedules");
  add_model_options(cmd, a->m);
  cmd->add_option("--trials", a->trials, "measured candidates in all")
      ->transform(number_in(1, 1e9))
      ->capture_default_str();
  cmd->add_option("--db", a->db, "tuning database")->capture_default_str();
  cmd->add_option("-o,--output", a->out, "artifact to write (default: MODEL.tuner)")
      ->check(nonempty_path());
  cmd->add_option("--seed", a->seed, "seed of all randomness")
      ->check(uint64_number())
      ->capture_default_str();
  cmd->add_option("--resume", a->resume,
                  "continue tuning run RUN (default: the same command's unfinished run, if any)")
      ->transform(number_in(1, 1e15));
  measure::add_threads_option(cmd, &a->threads, "threads of the measured kernels (default: TUNER_NUM_THREADS or all cores, as `tuner run`)");
  cmd->add_option("--batch", a->batch, "candidates per measurement round")
      ->transform(number_in(1, search::kMaxBatch))
      ->capture_default_str();
  cmd->add_option("--early-stop", a->early_stop,
                  "a task stops after this many trials without improvement (0: never)")
      ->transform(number_in(0, 1e9))
      ->capture_default_str();
  cmd->add_option("--cost-model", a->cost_model, "xgb or random")
      ->check(CLI::IsMember({"xgb", "random"}))
      ->capture_default_str();
  measure::add_measure_option(cmd, &a->cold);
  cmd->add_option("--validate", a->validate,
                  "after tuning, measure each task's N fastest schedules and its fallback again, "
                  "3 times in turn, then time the choice against the fallback inside the model; "
                  "compile chooses by these (0: off)")
      ->capture_default_str()
      ->transform(number_in(0, 1000));
  cmd->add_flag("--no-compile", a->no_compile, "only tune; do not compile the model");
  cmd->add_flag("-q,--quiet", a->quiet, "no progress lines");
  cmd->add_flag("--json", a->json, "print one JSON object at the end");
  add_remote_options(cmd, a->remote,
                     {"--threads", "--db", "--cost-model", "--measure", "--validate"});
  cmd->callback([a, cmd] {
    a->trials_given = cmd->count("--trials") > 0;
    // Tuned as the model will run: `tuner run` and the C API take every core by default.
    if (a->threads == 0) a->threads = default_num_threads();
    cmd_tune_model(*a);
    // Interrupted: its summary printed; 128 + the signal.
    if (StopSignals::requested()) throw CLI::RuntimeError(StopSignals::exit_status());
  });
}

}  // namespace tuner::cli
