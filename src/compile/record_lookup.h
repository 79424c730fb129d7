// Finding a workload and a target in a tuning database from what a user typed: a hash, a
// hash prefix or an op name; a target string or the start of one. Shared by `tuner db` and
// the server's database service, so both accept the same spellings.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "db/database.h"
#include "te/compute_dag.h"

namespace tuner::compile {

/// A workload by full hash, unique hash prefix (4+ digits) or unique op name; a UserError
/// naming the candidates otherwise.
db::Workload resolve_workload(db::Database& d, const std::string& what);

/// A target by its canonical string, or a unique one whose string starts with `what` + " "
/// (an emulated one only when `what` is emulated: emulated records are asked for explicitly).
/// Empty `what`: the one target with records of `w`.
std::string resolve_target(db::Database& d, const db::Workload& w, const std::string& what);
/// A target of any workload by its canonical string or a unique start of one, as above.
std::string resolve_target(db::Database& d, const std::string& what);

/// The DAG of a workload recorded by `tuner op tune` (op name + parameters), if its hash
/// still matches; nullopt for other workloads (a model's tasks, known only by hash).
std::optional<te::ComputeDAG> rebuild_op_dag(const db::Workload& w);

/// A check for db::ImportOptions: throws a UserError unless this Tuner can use a record of a
/// workload: its target parses (and is rewritten to its canonical string), its trace is a schedule
/// trace of the version this Tuner reads and, when the workload's DAG can be rebuilt
/// (rebuild_op_dag), replays on it. For `tuner db import` and the server's Import: a record that
/// cannot be replayed must not rank as a workload's best. Rebuilt DAGs are kept for the check's
/// lifetime.
std::function<void(const db::Workload&, db::Record&)> importable_check();

}  // namespace tuner::compile
