// Lowering: a scheduled ComputeDAG to loop IR, through one straight-line list of passes.
#pragma once

#include <string>
#include <vector>

#include "schedule/state.h"
#include "te/expr.h"

namespace tuner::schedule {

struct LowerOptions {
  /// Widest vector (lanes) the vectorizer may produce.
  int max_vector_lanes = 64;
  /// Longest loop explicitly unrolled.
  int64_t max_unroll_extent = 512;
  /// Print the IR after every pass that changed it (to stderr).
  bool print_passes = false;
};

/// A lowered kernel: arguments (inputs then outputs) and its loop IR.
struct LoweredFunc {
  std::string name;
  std::vector<te::Buffer> args;
  te::Stmt body;
  /// The loop IR, printed.
  std::string str() const;
};

/// Lowers a scheduled DAG to loop IR.
LoweredFunc lower(const State& state, const std::string& name, const LowerOptions& opts = {});

/// The loop IR before unrolling and vectorization (loops still carry their kinds): what
/// the cost model's features are extracted from.
LoweredFunc lower_for_features(const State& state);

}  // namespace tuner::schedule
