#include "search/evolutionary.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

#include "schedule/lower.h"
#include "schedule/lower_gpu.h"
#include "support/hash.h"

namespace tuner::search {

using schedule::Schedule;

EvolutionarySearch::EvolutionarySearch(te::ComputeDAG dag, SpaceOptions space, SearchOptions opts,
                                       costmodel::CostModel* model, uint64_t seed)
    : dag_(std::move(dag)), space_(std::move(space)), opts_(opts), model_(model), rng_(seed) {
  if (!space_.gpu) {
    // The fallback's choices in this space: the hand-written tile is often better than random
    // samples reach in a few hundred trials (resnet18's convs: 5-13 %), so it is measured
    // first and mutations search around it. (Choices it leaves open take seed 0.)
    SpaceOptions like = space_;
    like.like_fallback = true;
    start_ = generate_schedule(dag_, like, 0);
    start_key_ = program_key(*start_);
  }
  if (space_.gpu) {
    // GPU: tile sizes (which also move factors between block, vthread and thread levels),
    // unroll steps and the thread count of auto-bound stages.
    mutators_.push_back(make_tile_size_mutator());
    mutators_.push_back(make_unroll_mutator());
    mutators_.push_back(make_thread_binding_mutator());
    mutator_weights_ = {0.6, 0.2, 0.2};
    return;
  }
  mutators_.push_back(make_tile_size_mutator());
  mutators_.push_back(make_parallel_mutator());
  mutators_.push_back(make_unroll_mutator());
  mutators_.push_back(make_compute_location_mutator());
  // Mutation probabilities follow Ansor: tile sizes most often.
  mutator_weights_ = {0.55, 0.15, 0.15, 0.15};
}

uint64_t EvolutionarySearch::key_of(const Schedule& s) { return fnv1a64(s.state().str()); }

uint64_t EvolutionarySearch::program_key(const Schedule& s) const {
  // The lowered text, as the Builder dedupes by (the loop nests alone are a finer key:
  // vectorizing or unrolling erases some of their differences). On a GPU, the GPU lowering
  // (kernels and launch dimensions): the program that is built there.
  try {
    if (space_.gpu) return fnv1a64(schedule::lower_gpu(s.state(), "k").str());
    return fnv1a64(schedule::lower(s.state(), "k").str());
  } catch (const std::exception&) {
    return key_of(s);  // fails to lower: the Builder reports it; one measurement per state
  }
}

uint64_t EvolutionarySearch::cached_program_key(const Schedule& s, uint64_t state_key) {
  // Small spaces (Winograd's ~40 points) propose the same states round after round, and
  // lowering them again dominated the search's time.
  auto [it, inserted] = program_keys_.try_emplace(state_key, 0);
  if (inserted) it->second = program_key(s);
  return it->second;
}

Schedule EvolutionarySearch::sample_random() { return generate_schedule(dag_, space_, rng_.next()); }

Schedule EvolutionarySearch::mutate(const Schedule& parent) {
  Decisions d = decisions_of(parent.trace());
  for (int attempt = 0; attempt < 4; ++attempt) {
    const Mutator& m = *mutators_[rng_.weighted(mutator_weights_)];
    if (m.mutate(parent.trace(), d, rng_)) return generate_schedule(dag_, space_, rng_.next(), &d);
  }
  return parent;
}

void EvolutionarySearch::add_measured(const schedule::Trace& trace, double cost) {
  Schedule s = Schedule::replay(dag_, trace);
  measured_programs_.insert(cached_program_key(s, key_of(s)));
  if (!std::isfinite(cost)) return;
  measured_.emplace_back(cost, trace);
  measured_sorted_ = false;
}

void EvolutionarySearch::notify(const std::vector<Schedule>& cands, const std::vector<double>& costs) {
  for (size_t i = 0; i < cands.size(); ++i) {
    measured_programs_.insert(cached_program_key(cands[i], key_of(cands[i])));
    if (std::isfinite(costs[i])) measured_.emplace_back(costs[i], cands[i].trace());
  }
  measured_sorted_ = false;
}

std::vector<Schedule> EvolutionarySearch::propose(int n) {
  int pop_size = std::max(opts_.population, n);
  if (!measured_sorted_) {
    std::stable_sort(measured_.begin(), measured_.end(),
                     [](auto& a, auto& b) { return a.first < b.first; });
    measured_sorted_ = true;
  }
  // The fallback's point first, until it is measured.
  bool start = start_ && !measured_programs_.count(start_key_);
  // Initial population: the best measured schedules, then random samples.
  std::vector<Schedule> pop, randoms;
  if (start) pop.push_back(*start_);
  int from_measured = std::min<int>(int(measured_.size()), int(pop_size * opts_.measured_share));
  for (int i = 0; i < from_measured; ++i) pop.push_back(Schedule::replay(dag_, measured_[i].second));
  while (int(pop.size()) < pop_size) {
    randoms.push_back(sample_random());
    pop.push_back(randoms.back());
  }

  // Every schedule seen, with its latest score, for the final pick.
  std::unordered_map<uint64_t, std::pair<double, Schedule>> seen;
  auto score_all = [&](const std::vector<Schedule>& v) {
    std::vector<const schedule::State*> states;
    for (auto& s : v) states.push_back(&s.state());
    std::vector<double> scores = model_->predict(dag_, states);
    for (size_t i = 0; i < v.size(); ++i) seen.insert_or_assign(key_of(v[i]), std::make_pair(scores[i], v[i]));
    return scores;
  };

  for (int g = 0; g < opts_.generations; ++g) {
    std::vector<double> scores = score_all(pop);
    // Parents drawn by rank, weight (1 - rank / n)^2: scores are negated predicted costs,
    // whose differences (score - lowest) made every parent about equally likely.
    std::vector<size_t> order(pop.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
    std::vector<double> w(pop.size());
    for (size_t r = 0; r < order.size(); ++r) {
      double q = 1.0 - double(r) / double(order.size());
      w[order[r]] = q * q;
    }
    std::vector<Schedule> next;
    while (int(next.size()) < pop_size) next.push_back(mutate(pop[rng_.weighted(w)]));
    pop = std::move(next);
  }
  score_all(pop);

  // Best-predicted unmeasured candidates, then a few random ones.
  std::vector<std::pair<double, const Schedule*>> ranked;
  for (auto& [key, v] : seen) ranked.push_back({v.first, &v.second});  // `take` skips measured
  std::stable_sort(ranked.begin(), ranked.end(), [](auto& a, auto& b) { return a.first > b.first; });
  int n_random = std::max(n > 1 ? 1 : 0, int(std::round(n * opts_.eps_greedy)));
  std::vector<Schedule> out;
  std::set<uint64_t> taken;  // programs in `out`
  // Takes `s` unless its program was measured or is already in the batch.
  auto take = [&](const Schedule& s) {
    uint64_t p = cached_program_key(s, key_of(s));
    if (measured_programs_.count(p) || !taken.insert(p).second) return;
    out.push_back(s);
  };
  if (start && n > 0) take(*start_);
  for (auto& [score, s] : ranked) {
    if (int(out.size()) >= n - n_random) break;
    take(*s);
  }
  for (int attempt = 0; int(out.size()) < n && attempt < 4 * n; ++attempt)
    take(attempt < int(randoms.size()) ? randoms[attempt] : sample_random());
  return out;
}

}  // namespace tuner::search
