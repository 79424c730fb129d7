#include "search/mutator.h"

namespace tuner::search {

namespace {

class ComputeLocationMutator : public Mutator {
 public:
  const char* name() const override { return "compute_location"; }
  bool mutate(const schedule::Trace& t, Decisions& d, Rng& rng) const override {
    auto locs = sampling_of(t, schedule::InstKind::SampleComputeLocation);
    if (locs.empty()) return false;
    auto [in, k] = locs[rng.pick(locs.size())];
    // The valid range is known only when the rule program re-runs; an invalid value is
    // re-sampled there. Stay near the current choice.
    int64_t cur = d[k][0];
    int64_t next = cur + (rng.bernoulli(0.5) ? 1 : -1) * (1 + int64_t(rng.pick(2)));
    d[k] = {std::max<int64_t>(-2, next)};
    return next != cur;
  }
};

}  // namespace

std::unique_ptr<Mutator> make_compute_location_mutator() {
  return std::make_unique<ComputeLocationMutator>();
}

}  // namespace tuner::search
