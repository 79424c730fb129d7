// `tuner op tune OP k=v ... --trials N`: tunes one operator with the evolutionary search and
// the sandboxed local runner, committing every round to the tuning database.
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <fstream>

#include "cli/commands.h"
#include "cli/op_common.h"
#include "cli/run_owner.h"
#include "cli/tune_view.h"
#include "compile/record_lookup.h"
#include "costmodel/features.h"
#include "costmodel/random_model.h"
#include "costmodel/xgb_model.h"
#include "db/sqlite_database.h"
#include "db/timestamp.h"
#include "measure/builder.h"
#include "measure/local_runner.h"
#include "measure/measure_option.h"
#include "search/space_gpu.h"
#include "search/task_tuner.h"
#include "support/atomic_file.h"
#include "support/cli_main.h"
#include "support/error.h"
#include "support/json.h"
#include "support/stop_signal.h"
#include "support/thread_count.h"

namespace tuner::cli {

namespace {

struct TuneArgs {
  std::string op;
  std::vector<std::string> params;
  std::string target = "llvm";
  std::string db = "tuning_logs/tuning.db";
  std::string cost_model = "xgb";
  bool cold = true;  // --measure; as `tuner tune`: one workload's records serve models too
  std::string curve_csv;
  int trials = 1000;
  int batch = 64;
  int early_stop = 400;
  int threads = 0;  // 0: default_num_threads()
  int population = search::SearchOptions{}.population;
  uint64_t seed = 0;
  bool json = false;
  bool quiet = false;  // only the final summary
  bool verbose = false;
  RemoteOptions remote;
};

// `before`: trials a resumed run had spent, so the count is the run's.
std::string status_line(const search::TuneProgress& p, int before) {
  std::string errs;
  for (auto& [k, v] : p.errors) errs += fmt::format(" {}={}", k, v);
  return fmt::format("trials {}/{}  best {}  {:.1f} GFLOP/s  {:.1f} trials/s  errors:{}",
                     before + p.trials, before + p.budget,
                     p.best_seconds > 0 ? format_ms(p.best_seconds) + " ms" : "-",
                     p.best_gflops, p.trials_per_second(), errs.empty() ? " none" : errs);
}

void cmd_tune(const TuneArgs& a) {
  if (!a.remote.server.empty()) {
    RemoteTuneArgs r;
    r.remote = a.remote;
    r.op = a.op;
    r.params = a.params;
    r.target = a.target;
    r.trials = a.trials;
    r.batch = a.batch;
    r.early_stop = a.early_stop;
    r.seed = a.seed;
    r.json = a.json;
    r.quiet = a.quiet;
    remote_tune(r);
    return;
  }
  OpWorkload w = prepare_op(a.op, a.params, a.target);
  check_local_tuning(w.target);
  protect_input_file(a.db, "tuning database");
  if (!a.curve_csv.empty()) check_output_path(a.curve_csv);  // not only after tuning
  auto db = db::SqliteDatabase::open(a.db);

  search::TuneOptions opts;
  opts.trials = a.trials;
  opts.batch = a.batch;
  opts.early_stop = a.early_stop;
  opts.seed = a.seed;
  opts.space = search::space_options_for(w.target);
  opts.space.num_cores = a.threads;
  opts.search.population = a.population;

  costmodel::XGBModel* xgb_model = nullptr;
  std::unique_ptr<costmodel::CostModel> model =
      make_cost_model(a.cost_model, a.seed, a.verbose, &xgb_model);
  if (xgb_model) {
    size_t n = search::warm_start_model(*xgb_model, *db, w.target.str(), compile::rebuild_op_dag);
    if (n && !a.json && !a.quiet)
      fmt::print(stderr, "cost model: starting from {} records of {} in {}\n", n, w.target.str(), a.db);
  }

  measure::Builder builder;
  measure::LocalRunnerOptions ro;
  ro.threads = a.threads;
  ro.cold_calls = a.cold;
  measure::LocalRunner runner(ro);
  search::TuneTask task{w.dag, w.def->name, w.params.str(), w.target,
                        w.def->make_inputs(w.params, w.dag, a.seed)};
  // The same command continues its unfinished run (interrupted, or killed) with the trials
  // left, as `tuner tune` does; a finished one is tuned further by a new run. Records already
  // measured are never measured again either way (the search knows every one).
  const std::string what = "op " + w.def->name + " " + w.params.str();
  const Json run_args{{"target", w.target.str()}, {"trials", a.trials}, {"seed", a.seed}};
  int64_t run_id = 0;
  int resumed = 0;
  Json stored = Json::object();  // a resumed run's progress
  for (const auto& r : db->runs())
    if (r.what == what && r.args == run_args && r.state != db::RunState::Finished &&
        !process_alive(r.progress.value("owner", Json()))) {
      run_id = r.id;
      stored = r.progress;
      db::RecordFilter f;
      f.run_id = run_id;
      resumed = int(std::min<int64_t>(db->count_records(f), a.trials));
      break;
    }
  if (!run_id) run_id = db->create_run(what, run_args);
  const int64_t session_start = db::now_ms();
  const Json owner = this_process();
  // What the run keeps: its trials, owner and sessions.
  auto progress_json = [&](int trials) {
    return Json{{"trials", trials}, {"owner", owner}, {"sessions", run_sessions(stored, session_start)}};
  };
  opts.run_id = run_id;
  opts.trials = a.trials - resumed;
  const bool progress = !a.json && !a.quiet;
  if (resumed == a.trials) {  // killed after its last round, before it was marked finished
    db->update_run(run_id, db::RunState::Finished, progress_json(resumed));
    fmt::print(stderr, "run {} of this command had spent its {} trials; marked finished (run the "
               "command again to tune further)\n", run_id, a.trials);
    return;
  }
  if (resumed > 0 && progress)
    fmt::print(stderr, "resuming run {}: {} of {} trials already spent\n", run_id, resumed, a.trials);
  // The run's progress after every round, with its owner: a killed run shows its trials, and
  // `report --list` tells it from one still running.
  db->update_run(run_id, db::RunState::Running, progress_json(resumed));

  bool tty = isatty(2) && progress;
  double flops = w.dag.flops();
  double last_print = 0;
  if (progress)
    fmt::print(stderr, "tuning {} {} ({:.3g} GFLOP) on {}, {} trials, workload {}\n", w.def->name,
               w.params.str(), flops / 1e9, w.target.str(), a.trials, w.dag.hash_hex());
  // Ctrl-C or SIGTERM: the round ends, and what it measured stays.
  std::optional<StopSignals> stop_signals(std::in_place);
  search::TuneResult res;
  int spent = resumed;  // for a run that fails
  try {
    res = search::tune_task(task, opts, *db, builder, runner, *model,
                            [&](const search::TuneProgress& p) {
                              spent = resumed + p.trials;
                              db->update_run(run_id, db::RunState::Running, progress_json(spent));
                              if (!progress) return;
                              if (tty) {
                                fmt::print(stderr, "\r\033[K{}", status_line(p, resumed));
                              } else if (p.elapsed_seconds - last_print >= 10 || p.trials == p.budget) {
                                fmt::print(stderr, "{}\n", status_line(p, resumed));
                                last_print = p.elapsed_seconds;
                              }
                            },
                            StopSignals::requested);
  } catch (const std::exception& e) {
    stop_signals.reset();
    Json failed = progress_json(spent);
    failed["error"] = e.what();
    record_failed_run(*db, run_id, failed);
    throw;
  }
  stop_signals.reset();
  const auto& p = res.progress;
  const bool interrupted = StopSignals::requested();
  db->update_run(run_id, interrupted ? db::RunState::Interrupted : db::RunState::Finished,
                 progress_json(resumed + p.trials));
  // Keep the trained model (`tuner costmodel eval` reads it).
  if (xgb_model && xgb_model->trained())
    db->save_cost_model({w.target.str(), costmodel::kFeatureVersion, "xgboost", xgb_model->save(),
                         int64_t(xgb_model->num_programs())});
  std::vector<double> ov = p.overhead_seconds;
  std::sort(ov.begin(), ov.end());
  double overhead = ov.empty() ? 0 : ov[ov.size() / 2];

  if (!a.curve_csv.empty()) {
    write_file_atomically(a.curve_csv, [&](std::ostream& f) {
      f << "trial,best_gflops\n";
      for (size_t i = 0; i < p.curve.size(); ++i) f << i + 1 << "," << p.curve[i] << "\n";
    });
  }
  if (a.json) {
    Json errors = Json::object();
    for (auto& [k, v] : p.errors) errors[k] = v;
    fmt::print("{}\n", Json{{"op", w.def->name}, {"params", w.params.str()}, {"workload", w.dag.hash_hex()},
                            {"target", w.target.str()}, {"run", run_id}, {"trials", p.trials},
                            {"resumed_trials", resumed}, {"best_latency_ms", ms_or_null(p.best_seconds)},
                            {"best_gflops", p.best_seconds > 0 ? Json(p.best_gflops) : Json()},
                            {"trials_per_second", p.trials_per_second()},
                            {"baseline_latency_ms", ms_or_null(p.baseline_seconds)}, {"exhausted", res.exhausted},
                            {"overhead_ms_median", overhead * 1e3}, {"errors", errors},
                            {"seconds", {{"search", p.propose_seconds}, {"build", p.build_seconds},
                                         {"measure", p.run_seconds}, {"database", p.commit_seconds}}},
                            {"early_stopped", res.early_stopped}, {"interrupted", interrupted},
                            {"best_trace", res.best_trace.insts.empty() ? Json() : res.best_trace.to_json()}}
                           .dump());
    return;
  }
  if (tty) fmt::print(stderr, "\n");
  const char* why_ended = interrupted           ? " (interrupted: the same command resumes it)"
                          : res.early_stopped ? " (stopped early: no improvement)"
                          : res.exhausted     ? " (the search space is exhausted: every schedule it "
                                                "holds is measured in the database)"
                                              : "";
  fmt::print("{} {}: {} trials in {:.1f} s ({:.1f} trials/s){}\n", w.def->name, w.params.str(),
             p.trials, p.elapsed_seconds, p.trials_per_second(), why_ended);
  if (resumed > 0)
    fmt::print("  run {}: {} of {} trials, {} of them by an earlier process\n", run_id,
               resumed + p.trials, a.trials, resumed);
  if (p.best_seconds > 0)
    fmt::print("  best {} ms, {:.2f} GFLOP/s\n", format_ms(p.best_seconds), p.best_gflops);
  if (p.baseline_seconds > 0 && p.best_seconds > 0)
    fmt::print("  speed-up over the default (fallback) schedule: {:.2f}x ({} ms -> {} ms)\n",
               p.baseline_seconds / p.best_seconds, format_ms(p.baseline_seconds), format_ms(p.best_seconds));
  else if (p.best_seconds <= 0)
    fmt::print("  no candidate succeeded\n");
  fmt::print("  per-trial overhead (wall time minus kernel time): median {:.1f} ms\n", overhead * 1e3);
  fmt::print("  time: search + cost model {:.1f} s, build {:.1f} s, measure {:.1f} s, database {:.2f} s\n",
             p.propose_seconds, p.build_seconds, p.run_seconds, p.commit_seconds);
  for (auto& [k, v] : p.errors) fmt::print("  {} errors: {}\n", k, v);
  if (!res.best_trace.insts.empty()) fmt::print("  best trace:\n{}", res.best_trace.pretty());
  fmt::print("  records in {}\n", a.db);
}

}  // namespace

void add_op_tune_command(CLI::App* op) {
  static TuneArgs a;
  auto* tune = op->add_subcommand("tune", "tune an operator: search, measure, record in the database");
  tune->add_option("op", a.op, "operator name (see `tuner op list`)")->required();
  tune->add_option("params", a.params, "parameters as key=value");
  tune->add_option("--target", a.target, "compilation target")->capture_default_str();
  tune->add_option("--trials", a.trials, "measured candidates in all")
      ->transform(number_in(1, 1e9))
      ->capture_default_str();
  tune->add_option("--batch", a.batch, "candidates per measurement round")
      ->transform(number_in(1, search::kMaxBatch))
      ->capture_default_str();
  tune->add_option("--early-stop", a.early_stop,
                   "stop after this many trials without improvement (0: never)")
      ->transform(number_in(0, 1e9))
      ->capture_default_str();
  tune->add_option("--seed", a.seed, "seed of all randomness")
      ->check(uint64_number())
      ->capture_default_str();
  measure::add_threads_option(tune, &a.threads, "threads of the measured kernels (default: TUNER_NUM_THREADS or all cores, as `tuner run`)");
  tune->add_option("--db", a.db, "tuning database")->capture_default_str();
  tune->add_option("--cost-model", a.cost_model, "xgb or random")
      ->check(CLI::IsMember({"xgb", "random"}))
      ->capture_default_str();
  measure::add_measure_option(tune, &a.cold);
  tune->add_option("--population", a.population,
                   "schedules per generation of the evolutionary search (the model ranks them)")
      ->transform(number_in(1, 1e6))
      ->capture_default_str();
  tune->add_option("--curve", a.curve_csv, "write the tuning curve (best GFLOP/s by trial) as CSV")
      ->check(nonempty_path());
  tune->add_flag("-q,--quiet", a.quiet, "no progress lines: only the final summary");
  tune->add_flag("--json", a.json, "print one JSON object at the end");
  tune->add_flag("-v,--verbose", a.verbose, "print cost-model metrics at each retrain");
  add_remote_options(
      tune, a.remote,
      {"--threads", "--db", "--cost-model", "--measure", "--population", "--curve", "--verbose"});
  tune->callback([] {
    if (a.threads == 0) a.threads = default_num_threads();
    cmd_tune(a);
    // Interrupted: its summary printed; 128 + the signal.
    if (StopSignals::requested()) throw CLI::RuntimeError(StopSignals::exit_status());
  });
}

}  // namespace tuner::cli
