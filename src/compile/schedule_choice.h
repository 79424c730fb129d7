// Choosing a task's schedule at compile time: its validated or best database record for the
// target, else the fallback schedule.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codegen/target.h"
#include "db/database.h"
#include "schedule/schedule.h"

namespace tuner::compile {

struct ChosenSchedule {
  schedule::Schedule sched;
  std::string source;  // "fallback" or "database record #N"
  bool from_db = false;
  /// The database has ok records of the workload but none replays (written by an older
  /// Tuner whose traces named stages differently): re-tuning the task helps.
  bool stale = false;
  /// Chosen by timings after tuning that did not include this Tuner's fallback (an older
  /// Tuner's fallback was timed with it): it may now be slower than the fallback.
  bool against_other_fallback = false;
};

/// Opens the database at db_path read-only; nullptr when db_path is empty or absent.
std::unique_ptr<db::Database> open_db_if_present(const std::string& db_path);

/// How much faster than the fallback, timed in the model, a schedule must be to replace it.
/// The fastest of a few noisy medians is biased low (3 rounds of a dozen schedules): a 2 %
/// "win" of layer 1's conv of resnet18 (5 samples) then ran 0.58-0.98 ms in the artifact
/// against its fallback's 0.56-0.65.
inline constexpr double kInModelMargin = 0.03;

/// Whether a schedule timed at `sched_median` inside the model replaces the fallback timed
/// there at `fallback_median`: only when it is at least kInModelMargin faster.
bool beats_fallback_in_model(double sched_median, double fallback_median);

/// The schedule of (dag, target) in `db` (may be null), replayed: the faster in the model
/// when the tuning timed its choice inside the model (cli/model_validate.h; only with
/// `in_model`; the fallback unless that is 3 % faster than it there), else the validated
/// choice when it validated its best (search/validate.h), else the best ok record; the
/// fallback schedule when there is none or none replays.
ChosenSchedule choose_schedule(const te::ComputeDAG& dag, const codegen::Target& target,
                               db::Database* db, bool in_model = true);

/// Times (seconds) of the validation after tuning (search/validate.h): the median of the
/// fallback's measurements and the least median of any validated schedule's (the fallback's
/// included). Measured in turn, the two compare fairly, unlike the fallback's first
/// measurement and the luckiest record of a whole run.
struct ValidatedTimes {
  double fallback = 0;
  double best = 0;
};

/// The validated times of (dag, target) in `db`; nullopt when the fallback was not validated.
std::optional<ValidatedTimes> validated_times(const te::ComputeDAG& dag,
                                              const codegen::Target& target, db::Database& db);

/// The schedules of (dag, target) that the sandbox validated after tuning
/// (search/validate.h), by validated time, fastest first: at most `limit`.
std::vector<ChosenSchedule> validated_schedules(const te::ComputeDAG& dag,
                                                const codegen::Target& target, db::Database& db,
                                                size_t limit);

}  // namespace tuner::compile
