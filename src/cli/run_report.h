// The report of one tuning run (`tuner report RUN -o report.html`): its records gathered from
// the database per task, and a self-contained HTML page with SVG charts (tuning curves per
// task and for the whole model against trials and wall time, time per task, failed
// candidates by kind).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "db/database.h"

namespace tuner::cli {

/// A point of a best-so-far curve.
struct CurvePoint {
  int trial = 0;       // trials measured so far (of the task, or of the run for the model)
  double seconds = 0;  // wall time since the run started
  double best = 0;     // best time so far, seconds
};

struct ReportTask {
  std::string name, workload;  // operators; workload hash
  double weight = 1, flops = 0;
  int trials = 0, ok = 0;
  double seconds = 0;          // wall time spent on the task (0 when the run did not record it)
  double baseline = 0;         // the fallback schedule's time (0 when unknown)
  double first = 0, best = 0;  // first and best ok time of the run (0: none)
  std::map<std::string, int> errors;  // failed candidates by status
  std::vector<CurvePoint> curve;      // at every improvement, and at the task's last trial
};

struct RunReport {
  db::TuningRun run;
  std::string model, target, db_path;
  /// False for runs made before runs recorded their tasks: tasks are then the workloads of
  /// the run's records, each of weight 1.
  bool tasks_recorded = true;
  std::vector<ReportTask> tasks;
  /// Estimated model latency (sum of weight x best) once every task has a result.
  std::vector<CurvePoint> model_curve;
  int trials = 0;
  double latency_before_ms = 0, latency_after_ms = 0;  // measured by `tuner tune`; 0 if not
  /// The spans [start, end] (ms since the epoch) processes worked on the run, in order; empty
  /// for runs of older tuners. Wall times leave out the gaps between them.
  std::vector<std::pair<int64_t, int64_t>> sessions;
};

/// Seconds the run was worked on up to `ms` (a record's time): since its start, less the gaps
/// between sessions.
double active_seconds(const RunReport& r, int64_t ms);

/// How long the run was worked on: its sessions' sum, else its start to its end (0 while
/// running).
double run_seconds(const RunReport& r);

/// Gathers the report of run `run_id`; throws a UserError when there is no such run.
RunReport load_run_report(db::Database& db, int64_t run_id, const std::string& db_path);

/// The HTML page: inline CSS and SVG, no scripts, no external resources.
std::string render_report_html(const RunReport& r);

}  // namespace tuner::cli
