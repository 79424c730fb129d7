#include "search/task_tuner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <thread>

#include "codegen/default_schedule.h"
#include "costmodel/features.h"
#include "support/error.h"
#include "support/json.h"

namespace tuner::search {

namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

db::Record make_record(int64_t workload_id, const std::string& target,
                       const schedule::Trace& trace, const measure::MeasureResult& r,
                       const std::string& worker, std::optional<int64_t> run_id) {
  db::Record rec;
  rec.workload_id = workload_id;
  rec.target = target;
  rec.trace = trace.to_json().dump();
  rec.trace_version = schedule::Trace::kVersion;
  rec.status = r.status;
  rec.times = r.times;
  rec.error = r.error;
  rec.build_seconds = r.build_seconds;
  rec.run_seconds = r.run_seconds;
  rec.worker = worker;
  rec.tuner_version = TUNER_VERSION_STRING;
  rec.feature_version = costmodel::kFeatureVersion;
  rec.run_id = run_id;
  return rec;
}

std::vector<ReplayedWorkload> replay_records(
    db::Database& db, const std::string& target,
    const std::function<std::optional<te::ComputeDAG>(const db::Workload&)>& rebuild) {
  std::map<int64_t, std::vector<db::Record>> by_workload;
  for (auto& r : db.ok_records(target)) by_workload[r.workload_id].push_back(std::move(r));
  std::vector<ReplayedWorkload> out;
  for (auto& [wid, recs] : by_workload) {
    auto w = db.workload(wid);
    if (!w) continue;
    auto dag = rebuild(*w);
    if (!dag) continue;
    ReplayedWorkload rw{*w, *dag, {}, {}};
    for (auto& r : recs) {
      try {
        rw.schedules.push_back(
            schedule::Schedule::replay(*dag, schedule::Trace::from_json(parse_json(r.trace))));
        rw.costs.push_back(*r.median);
      } catch (const std::exception&) {
        // A record of an older trace format or workload definition: not usable here.
      }
    }
    if (!rw.costs.empty()) out.push_back(std::move(rw));
  }
  return out;
}

size_t warm_start_model(costmodel::CostModel& model, db::Database& db, const std::string& target,
                        const std::function<std::optional<te::ComputeDAG>(const db::Workload&)>& rebuild) {
  size_t n = 0;
  for (auto& rw : replay_records(db, target, rebuild)) {
    std::vector<const schedule::State*> states;
    for (auto& s : rw.schedules) states.push_back(&s.state());
    model.update(rw.dag, states, rw.costs);
    n += states.size();
  }
  return n;
}

double recorded_baseline(db::Database& db, int64_t workload_id, const TuneTask& task) {
  const std::string fallback =
      codegen::default_schedule(task.dag, task.target).trace().to_json().dump();
  db::RecordFilter f;
  f.workload_id = workload_id;
  f.target = task.target.str();
  f.status = db::MeasureStatus::Ok;
  double best = 0;
  db.for_each_record(f, [&](const db::Workload&, const db::Record& r) {
    if (r.trace == fallback && r.median && db::measured_alone(r) && (best == 0 || *r.median < best))
      best = *r.median;
  });
  return best;
}

namespace {

/// A search that knows every record of the task's workload in the database: the ok ones
/// (measured alone) as measured costs, failures only as never to be proposed again.
void start_search(TaskSearchState& st, const TuneTask& task, const TuneOptions& opts,
                  db::Database& db, costmodel::CostModel& model) {
  const std::string target = task.target.str();
  st.workload_id = db.commit_workload(db::Workload::from_dag(task.dag, task.op, task.params));
  st.search = std::make_unique<EvolutionarySearch>(task.dag, opts.space, opts.search, &model, opts.seed);
  db::RecordFilter f;
  f.workload_id = st.workload_id;
  f.target = target;
  db.for_each_record(f, [&](const db::Workload&, const db::Record& r) {
    if (!db::measured_alone(r) || r.trace_version != schedule::Trace::kVersion) return;
    double cost = r.status == db::MeasureStatus::Ok && r.median
                      ? *r.median : std::numeric_limits<double>::infinity();
    try {
      auto trace = schedule::Trace::from_json(parse_json(r.trace));
      st.search->add_measured(trace, cost);
      if (cost < st.best) {
        st.best = cost;
        st.best_trace = trace;
      }
    } catch (const std::exception&) {
      // A trace this version cannot replay on the workload: not a candidate of this space.
    }
  });
  st.baseline_pending = !std::isfinite(st.best);
  if (!st.baseline_pending && st.baseline == 0)
    st.baseline = recorded_baseline(db, st.workload_id, task);
}

}  // namespace

TuneResult tune_task(const TuneTask& task, const TuneOptions& opts, db::Database& db,
                     measure::Builder& builder, measure::Runner& runner,
                     costmodel::CostModel& model,
                     const std::function<void(const TuneProgress&)>& on_round,
                     const std::function<bool()>& should_stop, TaskSearchState* state) {
  USER_CHECK(opts.trials > 0) << "--trials must be positive";
  USER_CHECK(opts.batch > 0) << "the batch size must be positive";
  TuneResult res;
  TuneProgress& prog = res.progress;
  prog.budget = opts.trials;
  const std::string target = task.target.str();
  TaskSearchState local;
  TaskSearchState& st = state ? *state : local;
  if (!st.search) start_search(st, task, opts, db, model);
  res.workload_id = st.workload_id;
  res.best_trace = st.best_trace;
  EvolutionarySearch& search = *st.search;
  double& best = st.best;

  measure::MeasureTask mtask{task.dag, task.target, opts.seed, task.inputs, {}};
  double flops = task.dag.flops();
  double start = now_seconds();
  int since_improvement = 0;
  // A fresh workload starts by measuring the fallback schedule: a baseline the result can
  // never be worse than, and a best time that lets the runner give up on hopeless
  // candidates from the first round on.
  bool& baseline = st.baseline_pending;
  prog.baseline_seconds = st.baseline;
  if (std::isfinite(best)) {  // the database's best, so a run that finds nothing better says so
    prog.best_seconds = best;
    prog.best_gflops = flops / best / 1e9;
  }
  while (prog.trials < opts.trials) {
    if (should_stop && should_stop()) break;
    int n = std::min(opts.batch, opts.trials - prog.trials);
    double round_start = now_seconds();
    std::vector<schedule::Schedule> cands;
    bool measuring_baseline = baseline;
    if (baseline) {
      cands.push_back(codegen::default_schedule(task.dag, task.target));
      baseline = false;
    } else {
      cands = search.propose(n);
    }
    if (cands.empty()) {
      res.exhausted = true;
      break;
    }
    std::vector<schedule::Trace> traces;
    for (auto& c : cands) traces.push_back(c.trace());
    double t1 = now_seconds();
    auto built = builder.build(task.dag, traces, task.target, should_stop);
    // Stopped while building: the round is dropped, not measured (what was measured before
    // is in the database; a resumed run proposes it again).
    if (should_stop && should_stop()) break;
    double t2 = now_seconds();
    auto results = runner.run(mtask, built);
    double t3 = now_seconds();
    prog.propose_seconds += t1 - round_start;
    prog.build_seconds += t2 - t1;
    prog.run_seconds += t3 - t2;

    std::vector<db::Record> records;
    std::vector<double> costs;
    for (size_t i = 0; i < cands.size(); ++i) {
      const auto& r = results[i];
      records.push_back(make_record(res.workload_id, target, traces[i], r, opts.worker,
                                    opts.run_id ? std::optional(opts.run_id) : std::nullopt));
      double cost = r.ok() ? r.median() : std::numeric_limits<double>::infinity();
      costs.push_back(cost);
      ++prog.trials;
      if (!r.ok()) ++prog.errors[db::status_name(r.status)];
      if (cost < best * 0.99) since_improvement = 0;
      else ++since_improvement;
      if (cost < best) {
        best = cost;
        res.best_trace = st.best_trace = traces[i];
      }
      prog.curve.push_back(std::isfinite(best) ? flops / best / 1e9 : 0);
    }
    if (measuring_baseline && results[0].ok()) prog.baseline_seconds = st.baseline = results[0].median();
    double t4 = now_seconds();
    db.commit_round(records);
    prog.commit_seconds += now_seconds() - t4;
    search.notify(cands, costs);
    std::vector<const schedule::State*> states;
    for (auto& c : cands) states.push_back(&c.state());
    double t5 = now_seconds();
    model.update(task.dag, states, costs);
    prog.propose_seconds += now_seconds() - t5;

    // Per trial: its share of the parallel build, its run time outside the kernel, and its
    // share of search, learning and commit time.
    int build_threads = builder.options().threads > 0 ? builder.options().threads
                                                      : int(std::thread::hardware_concurrency());
    double shared = (t1 - round_start) + (now_seconds() - t4);
    for (size_t i = 0; i < cands.size(); ++i) {
      const auto& r = results[i];
      prog.overhead_seconds.push_back(r.build_seconds / std::max(1, build_threads) +
                                      std::max(0.0, r.run_seconds - r.kernel_seconds) +
                                      shared / double(cands.size()));
    }
    ++prog.rounds;
    prog.elapsed_seconds = now_seconds() - start;
    if (std::isfinite(best)) {
      prog.best_seconds = best;
      prog.best_gflops = flops / best / 1e9;
    }
    if (on_round) on_round(prog);
    if (opts.early_stop > 0 && since_improvement >= opts.early_stop) {
      res.early_stopped = true;
      break;
    }
  }
  return res;
}

}  // namespace tuner::search
