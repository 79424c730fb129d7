#include "cli/model_validate.h"

#include "codegen/default_schedule.h"
#include "cli/model_common.h"
#include "compile/schedule_choice.h"
#include "runtime/executor.h"
#include "search/task_tuner.h"

namespace tuner::cli {

namespace {

// Per task, the seconds of each timed run spent in its kernels divided by their count.
using TaskTimes = std::vector<std::vector<double>>;

// Adds the executor's last run to `out`.
void add_task_times(const runtime::Executor& ex, TaskTimes& out) {
  size_t num_tasks = out.size();
  std::vector<double> sum(num_tasks, 0);
  std::vector<int> kernels(num_tasks, 0);
  const auto& steps = ex.plan().steps;
  for (size_t s = 0; s < steps.size(); ++s) {
    int t = steps[s].task;
    if (t < 0 || size_t(t) >= num_tasks) continue;
    sum[size_t(t)] += ex.step_seconds()[s];
    ++kernels[size_t(t)];
  }
  for (size_t t = 0; t < num_tasks; ++t)
    if (kernels[t] > 0) out[t].push_back(sum[t] / kernels[t]);
}

db::Record model_record(int64_t workload_id, const std::string& target, const schedule::Trace& trace,
                        const std::vector<double>& times) {
  measure::MeasureResult r;
  r.status = db::MeasureStatus::Ok;
  r.times = times;
  for (double t : times) r.run_seconds += t;
  return search::make_record(workload_id, target, trace, r, std::string(db::kModelWorker), std::nullopt);
}

}  // namespace

InModelResult validate_in_model(const graph::Graph& g, const compile::ModelCompileOptions& co,
                                runtime::Artifact untuned, db::Database& db, int threads, int rounds) {
  graph::TaskSet ts = graph::extract_tasks(g, co.fuse);
  size_t n = ts.tasks.size();
  // The two builds: every task on its fallback; every task on its sandbox-chosen schedule.
  compile::ModelCompileOptions chosen_opts = co;
  chosen_opts.in_model_choice = false;
  std::vector<std::unique_ptr<runtime::Executor>> ex;
  ex.push_back(std::make_unique<runtime::Executor>(std::move(untuned), threads));
  ex.push_back(std::make_unique<runtime::Executor>(compile::compile_model(g, chosen_opts), threads));
  for (auto& e : ex) {
    set_random_inputs(*e);
    e->set_profiling(true);
  }
  std::vector<TaskTimes> times(2, TaskTimes(n));
  int round = 0;
  run_in_turn({ex[0].get(), ex[1].get()}, [&] { return round++ < rounds; },
              [&](size_t k, double) { add_task_times(*ex[k], times[k]); });
  InModelResult res;
  double sums[2] = {0, 0};
  std::vector<db::Record> records;
  std::string target = co.target.str();
  for (size_t t = 0; t < n; ++t) {
    const graph::Task& task = ts.tasks[t];
    double med[2];
    for (size_t b = 0; b < 2; ++b) {
      med[b] = times[b][t].empty() ? 0 : db::median_of(times[b][t]);
      sums[b] += med[b] * task.weight;
    }
    schedule::Trace fallback = codegen::default_schedule(task.dag, co.target).trace();
    compile::ChosenSchedule chosen = compile::choose_schedule(task.dag, co.target, &db, false);
    if (!chosen.from_db || chosen.sched.trace().to_json() == fallback.to_json()) continue;
    auto w = db.find_workload(task.dag.hash_hex());
    if (!w || times[0][t].empty() || times[1][t].empty()) continue;
    ++res.compared;
    res.fallback_wins += med[0] < med[1];
    records.push_back(model_record(w->id, target, fallback, times[0][t]));
    records.push_back(model_record(w->id, target, chosen.sched.trace(), times[1][t]));
  }
  if (!records.empty()) db.commit_round(records);
  res.fallback_ms = sums[0] * 1e3;
  res.chosen_ms = sums[1] * 1e3;
  return res;
}

}  // namespace tuner::cli
