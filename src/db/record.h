// A tuning record: one measured candidate (a schedule trace) of a workload on a target, with
// every repeat time, the status, and where and by what it was measured.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "db/measure_status.h"

namespace tuner::db {

struct Record {
  int64_t id = 0;           // assigned by the database (0 before commit)
  int64_t workload_id = 0;  // from Database::commit_workload
  std::string target;       // canonical target string
  std::string trace;        // the schedule trace as JSON text (opaque to the database;
                            //   stored in compact form)
  int trace_version = 0;    // the trace format version
  MeasureStatus status = MeasureStatus::Unknown;
  std::vector<double> times;      // seconds, every repeat (empty when nothing ran)
  std::optional<double> median;   // of `times`; set by the database for ok records only
  std::string error;              // the error message (empty when ok)
  double build_seconds = 0;       // time spent building the candidate
  double run_seconds = 0;         // time spent running it (all repeats, warm-up included)
  std::string worker;             // worker or device id ("local", "worker-3/gpu0", ...)
  std::string tuner_version;      // the Tuner that measured it ("0.1.0")
  int feature_version = 0;        // the cost-model feature version of that Tuner
  std::optional<int64_t> run_id;  // the tuning run that measured it, if any (not exported)
  int64_t created_ms = 0;         // when measured; 0 at commit means now
  std::string key;                // content key (32 hex digits), set by the database: two records
                                  //   with equal content have equal keys, so imports dedupe
};

/// The worker of records that re-measure a task's best schedules after tuning
/// (search/validate.h): compile chooses among those, by their medians.
inline constexpr std::string_view kValidationWorker = "validation";
/// The worker of records that time a task's chosen schedule and its fallback inside the
/// whole model after tuning (per kernel: the task's step times over its kernel count);
/// compile prefers these to the sandbox's validation.
inline constexpr std::string_view kModelWorker = "in-model";
/// Whether `r` was measured by a runner (sandbox or worker), not timed inside a model: only
/// those compare with each other, rank as best (Database::top_k) and train the cost model.
inline bool measured_alone(const Record& r) { return r.worker != kModelWorker; }

/// Selects records. Unset fields match everything.
struct RecordFilter {
  std::optional<int64_t> workload_id = std::nullopt;
  std::optional<std::string> target = std::nullopt;
  std::optional<MeasureStatus> status = std::nullopt;
  std::optional<int64_t> run_id = std::nullopt;
  /// Skip rows whose fields do not decode (a damaged file) instead of failing: for choosing
  /// schedules, where the next record or the fallback serves.
  bool skip_unreadable = false;
};

/// The median of `times` (the mean of the two middle values for an even count); times must
/// not be empty.
double median_of(std::vector<double> times);

/// Above any device's speed (100 PFLOP/s), and below one clock cycle: an ok time beyond either
/// comes from a broken timer or a forged record, and would rank first for ever.
inline constexpr double kMaxPlausibleFlopsPerSecond = 1e17;
inline constexpr double kMinPlausibleSeconds = 1e-10;
/// Longer than any build or measurement runs (about 30 years): a forged or broken value.
inline constexpr double kMaxPlausibleSeconds = 1e9;

/// Why `times` cannot be those of a record with `status` of a workload of `flops` FLOPs, or ""
/// when they can: an ok record has at least one time, each finite and positive, and a median
/// of at least kMinPlausibleSeconds and no faster than kMaxPlausibleFlopsPerSecond (checked
/// when flops > 0); other records' times are durations (valid_duration).
std::string times_problem(MeasureStatus status, const std::vector<double>& times, double flops = 0);

/// Whether `seconds` is a duration: non-negative, at most kMaxPlausibleSeconds.
bool valid_duration(double seconds);

/// Throws a UserError unless `r` can be stored: valid JSON trace, known status, an ok record
/// has at least one time, all times and seconds finite and non-negative, ...
void check_record(const Record& r);

/// The trace in the compact form the database stores (parsed and dumped again); throws a
/// UserError when it is not valid JSON.
std::string compact_trace(std::string_view trace_json);

/// The content key of a record of the workload with hash `workload_hash`: 32 hex digits over
/// everything but id, workload_id, run_id, median and key. `r.trace` must be compact.
std::string record_key(const Record& r, std::string_view workload_hash);

}  // namespace tuner::db
