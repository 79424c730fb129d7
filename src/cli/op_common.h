// What the `tuner op` commands share: parsing an op invocation, rebuilding an op's DAG from
// a database workload, and choosing the schedule (best record, else the fallback).
#pragma once

#include <cmath>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codegen/target.h"
#include "costmodel/xgb_model.h"
#include "compile/schedule_choice.h"
#include "db/database.h"
#include "db/workload.h"
#include "ops/registry.h"
#include "schedule/schedule.h"

#include <CLI/CLI.hpp>

namespace tuner::cli {

struct OpWorkload {
  const ops::OpDef* def;
  ops::Params params;
  te::ComputeDAG dag;
  codegen::Target target;
};

/// Parses "op k=v ..." and the target string (user errors name the problem); a cuda target
/// only when `allow_cuda`.
OpWorkload prepare_op(const std::string& op, const std::vector<std::string>& params,
                      const std::string& target, bool allow_cuda = false);

/// Refuses to tune locally for a target whose kernels do not run natively here (emulated
/// timings cannot rank schedules), saying how: a server with a worker of that target, or,
/// for aarch64, an emulated worker on this machine whose records are kept apart.
void check_local_tuning(const codegen::Target& target);

/// The DAG of a workload: one of `tasks` (a model's, which the database knows only by hash)
/// with its hash, else compile::rebuild_op_dag.
std::optional<te::ComputeDAG> rebuild_dag(const db::Workload& w, const std::vector<te::ComputeDAG>& tasks);

using compile::ChosenSchedule;

/// The best ok record of (dag, target) in the database at db_path, replayed; the fallback
/// schedule when the file does not exist or has no usable record.
ChosenSchedule choose_schedule(const te::ComputeDAG& dag, const codegen::Target& target,
                               const std::string& db_path);

/// The schedule of a trace JSON file (a trace, or a record with a "trace" field); a file that
/// cannot be read or a trace that does not apply to the DAG is a UserError naming why.
ChosenSchedule load_trace_schedule(const te::ComputeDAG& dag, const std::string& path);

/// The cost model named `kind` ("xgb" or "random"); *xgb points at it when it is XGBoost.
/// `verbose` prints ranking metrics at each retrain.
std::unique_ptr<costmodel::CostModel> make_cost_model(const std::string& kind, uint64_t seed,
                                                      bool verbose, costmodel::XGBModel** xgb);

/// Seconds as milliseconds for --json output; null when nothing was measured (0, inf, NaN).
inline Json ms_or_null(double seconds) {
  return seconds > 0 && std::isfinite(seconds) ? Json(seconds * 1e3) : Json();
}

/// Marks a run failed on the way out of its error; a database that cannot take that write
/// (a full disk) is only warned about, so the error the user sees stays the run's own.
void record_failed_run(db::Database& db, int64_t run_id, const Json& progress);

void add_op_tune_command(CLI::App* op);
/// `tuner op build` (op_build.cc): a GPU kernel's source, launch and resources.
void add_op_build_command(CLI::App* op);

}  // namespace tuner::cli
