// Mutators edit the decisions of a trace's sampling instructions (never its code); the rule
// program is then re-run with them. One file per mutator.
#pragma once

#include <memory>
#include <vector>

#include "schedule/trace.h"
#include "search/space.h"
#include "support/rng.h"

namespace tuner::search {

class Mutator {
 public:
  virtual ~Mutator() = default;
  virtual const char* name() const = 0;
  /// Changes `d` (the decisions of `trace`'s sampling instructions, in order). Returns false
  /// when the trace has nothing this mutator can change.
  virtual bool mutate(const schedule::Trace& trace, Decisions& d, Rng& rng) const = 0;
};

/// Moves a prime factor between two levels of a tile (the product is kept).
std::unique_ptr<Mutator> make_tile_size_mutator();
/// Moves a factor into or out of the outermost (parallel) level of a tile.
std::unique_ptr<Mutator> make_parallel_mutator();
/// Picks another auto-unroll step (categorical choices whose candidates include 0).
std::unique_ptr<Mutator> make_unroll_mutator();
/// GPU: picks another thread count for an auto-bound stage (categorical choices whose
/// candidates are all thread counts, multiples of 32).
std::unique_ptr<Mutator> make_thread_binding_mutator();
/// Picks another compute location.
std::unique_ptr<Mutator> make_compute_location_mutator();

/// Sampling instructions of the trace, as (instruction, decision index) pairs, of one kind.
std::vector<std::pair<const schedule::Instruction*, size_t>> sampling_of(
    const schedule::Trace& trace, schedule::InstKind kind);

}  // namespace tuner::search
