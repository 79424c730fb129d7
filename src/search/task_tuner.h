// Tuning one task (one workload on one target): rounds of propose (evolutionary search
// guided by the cost model) -> build -> measure in the sandbox -> commit to the database ->
// learn, until the trial budget is spent or trials stop bringing improvements.
#pragma once

#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codegen/target.h"
#include "costmodel/cost_model.h"
#include "db/database.h"
#include "measure/builder.h"
#include "measure/runner.h"
#include "ops/host_tensor.h"
#include "search/evolutionary.h"

namespace tuner::search {

struct TuneTask {
  te::ComputeDAG dag;
  std::string op;      // for the database: "matmul", a fused group's name, ...
  std::string params;  // for the database: "m=1024 n=1024 k=1024"
  codegen::Target target;
  /// Inputs the candidates are checked and timed on (dag.inputs() order).
  std::vector<ops::HostTensor> inputs;
};

/// The largest measurement round: the search samples at least that many schedules per round
/// (a round of a million grew a server by 150 MB/s, deaf to cancel, until it ran out of memory).
inline constexpr int kMaxBatch = 4096;

struct TuneOptions {
  /// Measured candidates in all (the budget).
  int trials = 1000;
  /// Candidates per measurement round.
  int batch = 64;
  /// Stop when this many trials in a row bring no improvement of at least 1% (0: never).
  int early_stop = 400;
  /// Seeds all randomness of the run.
  uint64_t seed = 0;
  SearchOptions search;
  SpaceOptions space;
  /// Where records come from and go ("local", a worker id, ...).
  std::string worker = "local";
  int64_t run_id = 0;
};

/// What the progress callback and the result report.
struct TuneProgress {
  int trials = 0, budget = 0, rounds = 0;
  double best_seconds = 0;  // the best known (the database's too); 0 while nothing succeeded
  double baseline_seconds = 0;  // the fallback schedule's time, when it was measured here
  double best_gflops = 0;
  double elapsed_seconds = 0;
  std::map<std::string, int> errors;  // by status name
  /// Best GFLOP/s after each trial (the tuning curve).
  std::vector<double> curve;
  /// Per-trial overhead: the trial's share of the parallel build, its run time outside the
  /// kernel, and its share of search, learning and commit time.
  std::vector<double> overhead_seconds;
  /// Wall time spent proposing (search + cost model), building, measuring, committing.
  double propose_seconds = 0, build_seconds = 0, run_seconds = 0, commit_seconds = 0;
  double trials_per_second() const { return elapsed_seconds > 0 ? trials / elapsed_seconds : 0; }
};

struct TuneResult {
  TuneProgress progress;
  schedule::Trace best_trace;  // empty when no candidate succeeded
  int64_t workload_id = 0;
  bool early_stopped = false;
  /// The space proposed nothing new: every schedule it holds is measured.
  bool exhausted = false;
};

/// What a task's tuning keeps between calls of tune_task: multi-task tuning gives each task
/// many short turns, and its search must remember every candidate measured in them.
struct TaskSearchState {
  std::unique_ptr<EvolutionarySearch> search;  // null before the first turn
  int64_t workload_id = 0;
  double best = std::numeric_limits<double>::infinity();
  schedule::Trace best_trace;
  /// The fallback schedule is still to be measured (a workload new to the database).
  bool baseline_pending = false;
  double baseline = 0;  // the fallback's time once known (seconds; may be set before the search)
};

/// Tunes a task. Records are committed to `db` after every round. `should_stop` is polled
/// between rounds (Ctrl-C). `state` carries the search across calls (null: a fresh one);
/// either way it starts from every record of the workload in the database, so no candidate
/// is measured twice. Throws UserError when the task cannot be measured at all.
TuneResult tune_task(const TuneTask& task, const TuneOptions& opts, db::Database& db,
                     measure::Builder& builder, measure::Runner& runner,
                     costmodel::CostModel& model,
                     const std::function<void(const TuneProgress&)>& on_round = {},
                     const std::function<bool()>& should_stop = {},
                     TaskSearchState* state = nullptr);

/// The fastest ok time (seconds, measured alone) of the task's fallback schedule among the
/// workload's records, 0 when it was never measured: a tuned task's baseline on a rerun.
double recorded_baseline(db::Database& db, int64_t workload_id, const TuneTask& task);

/// The ok records of a target, grouped by workload, replayed on DAGs that `rebuild` can
/// recreate (records whose trace no longer applies are skipped).
struct ReplayedWorkload {
  db::Workload workload;
  te::ComputeDAG dag;
  std::vector<schedule::Schedule> schedules;
  std::vector<double> costs;  // medians, seconds
};
std::vector<ReplayedWorkload> replay_records(
    db::Database& db, const std::string& target,
    const std::function<std::optional<te::ComputeDAG>(const db::Workload&)>& rebuild);

/// The database record of one measured candidate (run_id: the tuning run, if any).
db::Record make_record(int64_t workload_id, const std::string& target,
                       const schedule::Trace& trace, const measure::MeasureResult& r,
                       const std::string& worker, std::optional<int64_t> run_id);

/// Trains the cost model on the target's records in the database, for every workload whose
/// DAG `rebuild` can recreate (transfer between workloads). Returns the number of programs.
size_t warm_start_model(costmodel::CostModel& model, db::Database& db, const std::string& target,
                        const std::function<std::optional<te::ComputeDAG>(const db::Workload&)>& rebuild);

}  // namespace tuner::search
