// Evolutionary search (Ansor/MetaSchedule): a population sampled from the design space plus
// the best measured schedules, evolved for a few generations by mutating decisions, ranked by
// the cost model; each batch is the best-predicted unmeasured candidates plus a few random
// ones (epsilon-greedy).
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

#include "costmodel/cost_model.h"
#include "search/mutator.h"
#include "search/space.h"

namespace tuner::search {

struct SearchOptions {
  /// Schedules per generation.
  int population = 128;
  /// Generations of mutation per batch.
  int generations = 3;
  /// Share of each batch picked at random instead of by the model.
  double eps_greedy = 0.05;
  /// Share of the initial population taken from the best measured schedules.
  double measured_share = 0.2;
};

class EvolutionarySearch {
 public:
  EvolutionarySearch(te::ComputeDAG dag, SpaceOptions space, SearchOptions opts,
                     costmodel::CostModel* model, uint64_t seed);

  /// Up to n candidates whose programs were never measured before (nor proposed twice).
  std::vector<schedule::Schedule> propose(int n);
  /// Records measured candidates; cost in seconds, infinity for failures.
  void notify(const std::vector<schedule::Schedule>& cands, const std::vector<double>& costs);
  /// Seeds the search with a schedule measured earlier (e.g. from the database); cost in
  /// seconds, infinity for a failure (then it is only never proposed again).
  void add_measured(const schedule::Trace& trace, double cost);

  /// Distinct programs measured.
  size_t num_measured() const { return measured_programs_.size(); }
  /// Structural key of a schedule's state (cheap; for the search's bookkeeping).
  static uint64_t key_of(const schedule::Schedule& s);
  /// Key of the program a schedule lowers to: states that differ only where lowering erases
  /// the difference (a split by 1, a loop of extent 1 unrolled, ...) are one program.
  uint64_t program_key(const schedule::Schedule& s) const;

 private:
  schedule::Schedule sample_random();
  /// program_key, remembered by state key.
  uint64_t cached_program_key(const schedule::Schedule& s, uint64_t state_key);
  schedule::Schedule mutate(const schedule::Schedule& parent);

  te::ComputeDAG dag_;
  SpaceOptions space_;
  SearchOptions opts_;
  costmodel::CostModel* model_;
  Rng rng_;
  std::vector<std::unique_ptr<Mutator>> mutators_;
  std::vector<double> mutator_weights_;  // one per mutator
  std::set<uint64_t> measured_programs_;  // what is never proposed again
  std::unordered_map<uint64_t, uint64_t> program_keys_;  // state key -> program key
  /// The point of the space the fallback schedule takes (SpaceOptions::like_fallback), built
  /// once: proposed first until it is measured. None on GPU targets.
  std::optional<schedule::Schedule> start_;
  uint64_t start_key_ = 0;
  std::vector<std::pair<double, schedule::Trace>> measured_;  // best first once sorted
  bool measured_sorted_ = true;
};

}  // namespace tuner::search
