#include "schedule/schedule.h"
#include "search/mutator.h"

namespace tuner::search {

namespace {

// Moves one prime factor of level `from` to level `to`; keeps innermost <= max_inner.
bool move_factor(std::vector<int64_t>& tile, size_t from, size_t to, int64_t max_inner, Rng& rng) {
  if (from == to || tile[from] <= 1) return false;
  auto primes = schedule::prime_factors(tile[from]);
  int64_t p = primes[rng.pick(primes.size())];
  if (to == tile.size() - 1 && tile[to] * p > max_inner) return false;
  tile[from] /= p;
  tile[to] *= p;
  return true;
}

class TileSizeMutator : public Mutator {
 public:
  const char* name() const override { return "tile_size"; }
  bool mutate(const schedule::Trace& t, Decisions& d, Rng& rng) const override {
    auto tiles = sampling_of(t, schedule::InstKind::SamplePerfectTile);
    for (int attempt = 0; attempt < 16 && !tiles.empty(); ++attempt) {
      auto [in, k] = tiles[rng.pick(tiles.size())];
      auto& tile = d[k];
      if (tile.size() < 2) continue;
      size_t from = rng.pick(tile.size()), to = rng.pick(tile.size());
      if (move_factor(tile, from, to, in->args[2], rng)) return true;
    }
    return false;
  }
};

class ParallelMutator : public Mutator {
 public:
  const char* name() const override { return "parallel"; }
  bool mutate(const schedule::Trace& t, Decisions& d, Rng& rng) const override {
    auto tiles = sampling_of(t, schedule::InstKind::SamplePerfectTile);
    for (int attempt = 0; attempt < 16 && !tiles.empty(); ++attempt) {
      auto [in, k] = tiles[rng.pick(tiles.size())];
      auto& tile = d[k];
      if (tile.size() < 3) continue;  // only multi-level tiles have a parallel level
      size_t other = 1 + rng.pick(tile.size() - 1);
      bool grow = rng.bernoulli(0.5);
      if (grow ? move_factor(tile, other, 0, in->args[2], rng)
               : move_factor(tile, 0, other, in->args[2], rng))
        return true;
    }
    return false;
  }
};

}  // namespace

std::unique_ptr<Mutator> make_tile_size_mutator() { return std::make_unique<TileSizeMutator>(); }
std::unique_ptr<Mutator> make_parallel_mutator() { return std::make_unique<ParallelMutator>(); }

}  // namespace tuner::search
