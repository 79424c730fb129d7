// Structural questions about stages shared by the fallback schedule and the search rules.
#pragma once

#include <set>
#include <string>

#include "schedule/state.h"

namespace tuner::schedule {

/// Matmul- or conv-like reductions that get a multi-level (register) tiling.
bool is_tiled_reduction(const Stage& s);

/// Injective stages worth inlining: not outputs, not padding, not operands of a tiled
/// reduction (those are computed once rather than recomputed in its inner loop).
bool should_auto_inline(const State& st, const std::string& stage);

/// The single elementwise reader of `stage` with the same shape, computed at root, that can
/// hold `stage` in its loops (the epilogue of a matmul/conv); empty when there is none.
std::string epilogue_of(const State& st, const std::string& stage);

/// The epilogues of every tiled reduction of the state (scheduled together with it).
std::set<std::string> tiled_epilogues(const State& st);

}  // namespace tuner::schedule
