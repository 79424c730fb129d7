#include <algorithm>

#include "search/mutator.h"

namespace tuner::search {

namespace {

class UnrollMutator : public Mutator {
 public:
  const char* name() const override { return "unroll"; }
  bool mutate(const schedule::Trace& t, Decisions& d, Rng& rng) const override {
    // Categorical choices feeding auto_unroll: those whose candidates include 0 and > 2 values.
    std::vector<std::pair<const schedule::Instruction*, size_t>> unrolls;
    for (auto& c : sampling_of(t, schedule::InstKind::SampleCategorical)) {
      auto& a = c.first->args;
      if (a.size() > 2 && std::find(a.begin(), a.end(), 0) != a.end()) unrolls.push_back(c);
    }
    if (unrolls.empty()) return false;
    auto [in, k] = unrolls[rng.pick(unrolls.size())];
    int64_t n = int64_t(in->args.size());
    int64_t next = (d[k][0] + 1 + int64_t(rng.pick(size_t(n - 1)))) % n;
    d[k] = {next};
    return true;
  }
};

}  // namespace

std::unique_ptr<Mutator> make_unroll_mutator() { return std::make_unique<UnrollMutator>(); }

}  // namespace tuner::search
