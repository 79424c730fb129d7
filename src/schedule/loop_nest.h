// Loop-nest generation (bound inference, inlining, loop nests, guards) from a schedule State.
#pragma once

#include <vector>

#include "schedule/state.h"
#include "te/expr.h"

namespace tuner::schedule {

struct LoopNest {
  std::vector<te::Buffer> args;  // the DAG's inputs, then its outputs
  te::Stmt body;                 // multi-dimensional buffer accesses
};

/// Builds the loop IR of a scheduled DAG.
LoopNest build_loop_nests(const State& state);

}  // namespace tuner::schedule
