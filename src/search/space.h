// The design space of a workload: a rule program that builds a schedule, drawing every
// choice from a sampling instruction. Running it with fresh randomness samples the space;
// running it with preset decisions (a mutated trace's) rebuilds that point of the space.
#pragma once

#include <cstdint>
#include <vector>

#include "schedule/schedule.h"

namespace tuner::search {

struct SpaceOptions {
  /// float32 lanes of the target's vector registers.
  int vector_lanes = 16;
  /// The target's vector registers (register tiles are sized for them).
  int vector_registers = 32;
  /// Cores of the target (parallel loops are sized for them).
  int num_cores = 2;
  /// Largest innermost tile factor of a spatial loop.
  int64_t max_innermost_factor = 64;
  /// Candidate auto-unroll steps and their probabilities. 512 is drawn less often: such a
  /// candidate takes ~1 s to compile (0-64: 50-80 ms), and rarely wins with explicit vectors.
  std::vector<int64_t> unroll_steps{0, 16, 64, 512};
  std::vector<double> unroll_probs{0.3, 0.3, 0.3, 0.1};

  /// Take the fallback schedule's choices where the space can express them (its register
  /// tile, reduction order and padding) instead of sampling: the search's starting point.
  bool like_fallback = false;

  /// A GPU target (cuda): the GPU rules (bound loops, shared and local caches) replace the
  /// CPU ones. See space_options_for in search/space_gpu.h.
  bool gpu = false;
  /// GPU: threads per block an auto-bound stage may use.
  std::vector<int64_t> gpu_threads{32, 64, 128, 256, 512, 1024};
  /// GPU: auto-unroll steps (unrolled by the CUDA/OpenCL compiler: `#pragma unroll`).
  std::vector<int64_t> gpu_unroll_steps{0, 16, 64, 512, 1024};
  /// GPU: largest innermost tile factor of the multi-level tiling.
  int64_t gpu_max_innermost_factor = 8;
};

using Decisions = std::vector<std::vector<int64_t>>;

/// One schedule of `dag` from the space; `presets` (if any) are used in order.
schedule::Schedule generate_schedule(const te::ComputeDAG& dag, const SpaceOptions& opts,
                                     uint64_t seed, const Decisions* presets = nullptr);

/// The decisions of a trace's sampling instructions, in order.
Decisions decisions_of(const schedule::Trace& trace);

}  // namespace tuner::search
