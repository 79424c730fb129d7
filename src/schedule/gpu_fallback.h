// The GPU default schedule and the auto-binding it is made of: every stage computed at root
// gets its outer spatial loops fused and split over blocks and threads, so any DAG has a
// correct GPU kernel (a reasonable one for injective and row-wise stages and for long
// reductions to few values).
#pragma once

#include "schedule/schedule.h"

namespace tuner::schedule {

/// Binds the outer run of unannotated spatial loops of `stage` (a root stage without any
/// binding): fused, split by `threads`, the outer part to blockIdx.x and the inner to
/// threadIdx.x. Does nothing when the stage is bound already or has no such loop (a
/// reduction to a scalar then runs in one thread). Returns true when it bound something.
bool auto_bind(Schedule& s, const std::string& stage, int64_t threads = 256);

/// Injective stages inlined, long reductions with few outputs split into partial results
/// (rfactor), every root stage auto-bound.
Schedule gpu_fallback_schedule(const te::ComputeDAG& dag, int64_t threads = 256);

}  // namespace tuner::schedule
