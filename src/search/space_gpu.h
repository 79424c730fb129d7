// The GPU design space (SpaceOptions::gpu): the rule program for cuda targets.
#pragma once

#include "codegen/target.h"
#include "search/space.h"

namespace tuner::search {

/// One schedule of `dag` from the GPU space; `presets` (if any) are used in order.
schedule::Schedule generate_gpu_schedule(const te::ComputeDAG& dag, const SpaceOptions& opts,
                                         uint64_t seed, const Decisions* presets = nullptr);

/// Space options for a target: the GPU rules for cuda, the CPU ones (with its vector lanes)
/// otherwise.
SpaceOptions space_options_for(const codegen::Target& target);

}  // namespace tuner::search
