#include "cli/model_validate.h"

#include <algorithm>
#include <map>

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
                                int rounds, int top) {
  graph::TaskSet ts = graph::extract_tasks(g, co.fuse);
  size_t n = ts.tasks.size();
  // Each task's candidates: its validated schedules, fastest first (else its best record).
  std::vector<std::vector<schedule::Schedule>> cands(n);
  size_t ranks = 1;
  for (size_t t = 0; t < n; ++t) {
    for (auto& c : compile::validated_schedules(ts.tasks[t].dag, co.target, db, size_t(top)))
      cands[t].push_back(std::move(c.sched));
    if (cands[t].empty()) {
      compile::ChosenSchedule c = compile::choose_schedule(ts.tasks[t].dag, co.target, &db, false);
      if (c.from_db) cands[t].push_back(std::move(c.sched));
    }
    ranks = std::max(ranks, cands[t].size());
  }
  // Build 0: every task on its fallback. Build r: every task on its r-th candidate (its last
  // when it has fewer).
  std::vector<std::unique_ptr<runtime::Executor>> ex;
  ex.push_back(std::make_unique<runtime::Executor>(std::move(untuned), threads));
  for (size_t r = 0; r < ranks; ++r) {
    compile::ModelCompileOptions o = co;
    o.in_model_choice = false;
    o.pick = [&](size_t t) -> std::optional<schedule::Schedule> {
      if (cands[t].empty()) return std::nullopt;
      return cands[t][std::min(r, cands[t].size() - 1)];
    };
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
  run_in_turn(turn, [&] { return round++ < rounds; },
              [&](size_t k, double secs) { runs.push_back({k, secs, task_times(*ex[k], n)}); });
  std::vector<TaskTimes> times = quiet_times(runs, ex.size(), n);

  InModelResult res;
  std::vector<db::Record> records;
  std::string target = co.target.str();
  for (size_t t = 0; t < n; ++t) {
    const graph::Task& task = ts.tasks[t];
    auto median = [&](size_t b) { return times[b][t].empty() ? 0.0 : db::median_of(times[b][t]); };
    res.fallback_ms += median(0) * task.weight * 1e3;
    res.chosen_ms += median(1) * task.weight * 1e3;
    // The times of each distinct schedule (a task with fewer candidates repeats its last).
    schedule::Trace fallback = codegen::default_schedule(task.dag, co.target).trace();
    std::map<std::string, std::pair<schedule::Trace, std::vector<double>>> by_trace;
    std::string fallback_key = fallback.to_json().dump();
    by_trace[fallback_key] = {fallback, times[0][t]};
    for (size_t b = 1; b < ex.size() && !cands[t].empty(); ++b) {
      const schedule::Trace& tr = cands[t][std::min(b - 1, cands[t].size() - 1)].trace();
      auto& entry = by_trace.try_emplace(tr.to_json().dump(), tr, std::vector<double>{}).first->second;
      entry.second.insert(entry.second.end(), times[b][t].begin(), times[b][t].end());
    }
    double best = median(0);
    std::string best_key = fallback_key;
    for (auto& [key, entry] : by_trace)
      if (!entry.second.empty() && db::median_of(entry.second) < best) {
        best = db::median_of(entry.second);
        best_key = key;
      }
    res.best_ms += best * task.weight * 1e3;
    auto w = db.find_workload(task.dag.hash_hex());
    if (by_trace.size() < 2 || !w || times[0][t].empty()) continue;
    ++res.compared;
    res.fallback_wins += best_key == fallback_key;
    res.lower_rank_wins +=
        best_key != fallback_key && best_key != cands[t][0].trace().to_json().dump();
    for (auto& [key, entry] : by_trace)
      if (!entry.second.empty())
        records.push_back(model_record(w->id, target, entry.first, entry.second));
  }
  if (!records.empty()) db.commit_round(records);
  return res;
}

}  // namespace tuner::cli
