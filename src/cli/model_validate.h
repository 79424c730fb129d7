// In-model validation after tuning. The sandbox times a kernel alone, repeated over the
// same warm inputs; inside the model a kernel reads what the previous one just wrote (often
// in the other core's cache) and weights that are cold. A schedule faster in the sandbox can
// be slower there (resnet18: tuned 1.2-1.7x faster per task in the sandbox, end to end no
// faster than the fallbacks; mobilenet_v2: a projection's sandbox best 1.6x slower in the
// model than another of its validated schedules at one thread). So the model is compiled
// once per rank of the choices — every task on its fallback, every task on its fastest
// validated schedule, on its second, ... — all run in turn with every kernel timed, and each
// task gets records of its per-kernel time under each of its schedules (worker
// db::kModelWorker), which compile prefers (compile/schedule_choice.h).
#pragma once

#include <string>

#include "compile/compile_model.h"
#include "db/database.h"
#include "graph/graph.h"

namespace tuner::cli {

struct InModelResult {
  int compared = 0;          // tasks with a schedule other than the fallback
  int fallback_wins = 0;     // of those, where compile keeps the fallback (none 3 % faster)
  int lower_rank_wins = 0;   // where it picks another than the sandbox's fastest
  double fallback_ms = 0;    // Σ weight x kernel time: all fallbacks, all sandbox choices,
  double chosen_ms = 0;      // and compile's choices by these times
  double best_ms = 0;
};

/// Times each task's `top` validated schedules (else its best record) and its fallback
/// inside the model, `rounds` blocks in turn, and records in `db` each schedule's kernel time
/// per round (the median of its block: cli/quiet_runs.h).
/// `untuned` is the model compiled with fallbacks only (`co` without a database); `co` names
/// the database the choices come from.
InModelResult validate_in_model(const graph::Graph& g, const compile::ModelCompileOptions& co,
                                runtime::Artifact untuned, db::Database& db, int threads,
                                int top = 3, int rounds = 10);

}  // namespace tuner::cli
