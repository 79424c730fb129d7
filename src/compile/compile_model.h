// Whole-model compilation: tasks -> schedules (best database record, else the fallback) ->
// one shared object with every kernel -> an execution plan with planned memory -> artifact.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "codegen/target.h"
#include "graph/passes.h"
#include "graph/tasks.h"
#include "runtime/artifact.h"
#include "schedule/schedule.h"

namespace tuner::compile {

struct ModelCompileOptions {
  codegen::Target target;
  std::string db_path;  // "" = no database: fallback schedules only
  /// Prefer the choices timed inside the model after tuning (compile/schedule_choice.h).
  bool in_model_choice = true;
  graph::FuseOptions fuse;
  /// When set: each task's ComputeDAG, schedule, lowered IR and LLVM IR are written here.
  std::string dump_dir;
  /// Progress lines to stderr.
  bool verbose = false;
  /// When set, and it gives a schedule for a task (by index), that schedule is used instead
  /// of the database's choice (in-model validation builds each rank of the choices).
  std::function<std::optional<schedule::Schedule>(size_t task)> pick;
};

/// What compilation did, for the CLI and tests.
struct CompileReport {
  int groups = 0, tasks = 0, tasks_from_db = 0;
  int tasks_stale = 0;  // fallback although the database has records (ChosenSchedule::stale)
  int tasks_other_fallback = 0;  // ChosenSchedule::against_other_fallback
  bool db_found = false;         // a database was at ModelCompileOptions::db_path
  double seconds = 0, codegen_seconds = 0;
  int64_t arena_bytes = 0, unplanned_bytes = 0, weight_bytes = 0;
  std::vector<std::string> task_sources;  // per task: "fallback" / "database record #N"
};

/// The graph passes' options for `target`: its CPU layouts (vector lanes and registers) on an
/// llvm target, the ONNX layouts on a GPU.
graph::PassOptions pass_options_for(const codegen::Target& target);

/// Compiles `g` (imported, passes applied) into an artifact.
runtime::Artifact compile_model(const graph::Graph& g, const ModelCompileOptions& opts,
                                CompileReport* report = nullptr);

}  // namespace tuner::compile
