// The schedule a DAG gets on a target when nothing better is known (no tuning record): what
// tuning measures first as its baseline, validation measures against, and compile falls back to.
#pragma once

#include "codegen/target.h"
#include "schedule/schedule.h"

namespace tuner::codegen {

/// The GPU fallback for CUDA targets, else the CPU fallback with the target's vector width.
schedule::Schedule default_schedule(const te::ComputeDAG& dag, const Target& target);

}  // namespace tuner::codegen
