// Choosing a task's schedule at compile time: its validated or best database record for the
// target, else the fallback schedule.
#pragma once

#include <memory>
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
};

/// Opens the database at db_path read-only; nullptr when db_path is empty or absent.
std::unique_ptr<db::Database> open_db_if_present(const std::string& db_path);

/// The schedule of (dag, target) in `db` (may be null), replayed: the faster in the model
/// when the tuning timed its choice inside the model (cli/model_validate.h; only with
/// `in_model`; the fallback unless that is 3 % faster than it there), else the validated
/// choice when it validated its best (search/validate.h), else the best ok record; the
/// fallback schedule when there is none or none replays.
ChosenSchedule choose_schedule(const te::ComputeDAG& dag, const codegen::Target& target,
                               db::Database* db, bool in_model = true);

/// The schedules of (dag, target) that the sandbox validated after tuning
/// (search/validate.h), by validated time, fastest first: at most `limit`.
std::vector<ChosenSchedule> validated_schedules(const te::ComputeDAG& dag,
                                                const codegen::Target& target, db::Database& db,
                                                size_t limit);

}  // namespace tuner::compile
