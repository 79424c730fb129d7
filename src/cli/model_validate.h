// In-model validation after tuning. The sandbox times a kernel alone, repeated over the
// same warm inputs; inside the model a kernel reads what the previous one just wrote (often
// in the other core's cache) and weights that are cold. A schedule faster in the sandbox can
// be slower there (resnet18: tuned 1.2-1.7x faster per task in the sandbox, end to end no
// faster than the fallbacks). So the model is compiled twice — every task on its fallback,
// every task on its validated choice — both run in turn with every kernel timed, and each task
// gets records of its per-kernel time under both (worker db::kModelWorker), which compile
// prefers (compile/schedule_choice.h).
#pragma once

#include <string>

#include "compile/compile_model.h"
#include "db/database.h"
#include "graph/graph.h"

namespace tuner::cli {

struct InModelResult {
  int compared = 0;        // tasks whose chosen schedule is not the fallback
  int fallback_wins = 0;   // of those, where the fallback ran faster in the model
  double fallback_ms = 0;  // the model's latency on fallbacks and on the choices
  double chosen_ms = 0;
};

/// Times each task's chosen schedule (sandbox validation, else the best record) against its
/// fallback inside the model, `rounds` blocks in turn, and records every timed run's
/// per-kernel time in `db`. `untuned` is the model compiled with fallbacks only (`co` without
/// a database); `co` names the database the choices come from.
InModelResult validate_in_model(const graph::Graph& g, const compile::ModelCompileOptions& co,
                                runtime::Artifact untuned, db::Database& db, int threads,
                                int rounds = 6);

}  // namespace tuner::cli
