#include "cli/model_validate.h"

#include <algorithm>

#include "codegen/default_schedule.h"
#include "cli/model_common.h"
#include "cli/quiet_runs.h"
#include "compile/schedule_choice.h"
#include "runtime/executor.h"
#include "search/task_tuner.h"

namespace tuner::cli {

namespace {

// Per task, the seconds of the executor's last run spent in its kernels divided by their
// count (-1 for a task without kernels).
std::vector<double> task_times(const runtime::Executor& ex, size_t num_tasks) {
  std::vector<double> sum(num_tasks, 0);
  std::vector<int> kernels(num_tasks, 0);
  const auto& steps = ex.plan().steps;
  for (size_t s = 0; s < steps.size(); ++s) {
    int t = steps[s].task;
    if (t < 0 || size_t(t) >= num_tasks) continue;
    sum[size_t(t)] += ex.step_seconds()[s];
    ++kernels[size_t(t)];
  }
  for (size_t t = 0; t < num_tasks; ++t) sum[t] = kernels[t] > 0 ? sum[t] / kernels[t] : -1;
  return sum;
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
                                runtime::Artifact untuned, db::Database& db, int threads,
                                int top, int rounds) {
  graph::TaskSet ts = graph::extract_tasks(g, co.fuse);
  size_t n = ts.tasks.size();
  // Per task: its distinct schedules, the fallback first, then its validated ones fastest
  // first (else its best record); and the one each build runs. Build 0 runs every fallback,
  // build r every task's r-th validated schedule (its last when it has fewer).
  std::vector<std::vector<schedule::Schedule>> scheds(n);
  std::vector<std::vector<size_t>> of_build(n);
  size_t builds = 2;
  for (size_t t = 0; t < n; ++t) {
    const te::ComputeDAG& dag = ts.tasks[t].dag;
    scheds[t].push_back(codegen::default_schedule(dag, co.target));
    std::vector<compile::ChosenSchedule> cands =
        compile::validated_schedules(dag, co.target, db, size_t(top));
    if (cands.empty()) cands.push_back(compile::choose_schedule(dag, co.target, &db, false));
    of_build[t].push_back(0);
    for (auto& c : cands) {
      size_t i = 0;
      while (i < scheds[t].size() && !(scheds[t][i].trace() == c.sched.trace())) ++i;
      if (i == scheds[t].size()) scheds[t].push_back(std::move(c.sched));
      of_build[t].push_back(i);
    }
    builds = std::max(builds, of_build[t].size());
  }
  auto sched_of = [&](size_t t, size_t b) {
    return of_build[t][std::min(b, of_build[t].size() - 1)];
  };
  std::vector<std::unique_ptr<runtime::Executor>> ex;
  ex.push_back(std::make_unique<runtime::Executor>(std::move(untuned), threads));
  for (size_t b = 1; b < builds; ++b) {
    compile::ModelCompileOptions o = co;
    o.pick = [&](size_t t) -> std::optional<schedule::Schedule> { return scheds[t][sched_of(t, b)]; };
    ex.push_back(std::make_unique<runtime::Executor>(compile::compile_model(g, o), threads));
  }
  std::vector<runtime::Executor*> turn;
  for (auto& e : ex) {
    set_random_inputs(*e);
    e->set_profiling(true);
    turn.push_back(e.get());
  }
  std::vector<TimedRun> runs;
  int round = 0;
  run_in_turn(turn, [&] { return round++ < rounds; },  // `round` - 1 is the current one
              [&](size_t k, double) { runs.push_back({k, size_t(round - 1), task_times(*ex[k], n)}); });
  std::vector<TaskTimes> times = round_medians(runs, builds, n);

  InModelResult res;
  std::vector<db::Record> records;
  std::string target = co.target.str();
  for (size_t t = 0; t < n; ++t) {
    const graph::Task& task = ts.tasks[t];
    // Each distinct schedule's times over the builds that ran it, each round's paired with
    // the fallback build's in the same round: scaled by (fallback's median / fallback's time
    // that round), so the machine's speed from moment to moment cancels out of the choice.
    auto median = [](const std::vector<double>& v) { return v.empty() ? 0.0 : db::median_of(v); };
    const std::vector<double>& base = times[0][t];
    double base_median = median(base);
    std::vector<std::vector<double>> per_sched(scheds[t].size());
    for (size_t b = 0; b < builds; ++b) {
      auto& dst = per_sched[sched_of(t, b)];
      for (size_t r = 0; r < times[b][t].size(); ++r) {
        bool paired = b != 0 && r < base.size() && base[r] > 0;
        dst.push_back(paired ? times[b][t][r] * base_median / base[r] : times[b][t][r]);
      }
    }
    res.fallback_ms += median(times[0][t]) * task.weight * 1e3;
    res.chosen_ms += median(times[1][t]) * task.weight * 1e3;
    std::vector<double> med(per_sched.size());
    for (size_t i = 0; i < per_sched.size(); ++i) med[i] = median(per_sched[i]);
    size_t best = 0;
    for (size_t i = 1; i < per_sched.size(); ++i)
      if (!per_sched[i].empty() && med[i] < med[best]) best = i;
    // As compile will choose: the fallback unless the fastest beats it by the margin.
    if (best != 0 && !per_sched[0].empty() && !compile::beats_fallback_in_model(med[best], med[0]))
      best = 0;
    res.best_ms += med[best] * task.weight * 1e3;
    auto w = db.find_workload(task.dag.hash_hex());
    if (scheds[t].size() < 2 || !w || per_sched[0].empty()) continue;
    ++res.compared;
    res.fallback_wins += best == 0;
    res.lower_rank_wins += best != 0 && best != sched_of(t, 1);
    for (size_t i = 0; i < scheds[t].size(); ++i)
      if (!per_sched[i].empty())
        records.push_back(model_record(w->id, target, scheds[t][i].trace(), per_sched[i]));
  }
  if (!records.empty()) db.commit_round(records);
  return res;
}

}  // namespace tuner::cli
