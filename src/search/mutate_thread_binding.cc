#include <algorithm>

#include "search/mutator.h"

namespace tuner::search {

namespace {

class ThreadBindingMutator : public Mutator {
 public:
  const char* name() const override { return "thread_binding"; }
  bool mutate(const schedule::Trace& t, Decisions& d, Rng& rng) const override {
    std::vector<std::pair<const schedule::Instruction*, size_t>> counts;
    for (auto& c : sampling_of(t, schedule::InstKind::SampleCategorical)) {
      auto& a = c.first->args;
      if (a.size() > 1 && std::all_of(a.begin(), a.end(), [](int64_t v) { return v >= 32 && v % 32 == 0; }))
        counts.push_back(c);
    }
    if (counts.empty()) return false;
    auto [in, k] = counts[rng.pick(counts.size())];
    // A neighbouring count: half or double the threads.
    int64_t n = int64_t(in->args.size()), cur = d[k][0];
    int64_t next = rng.bernoulli(0.5) ? cur - 1 : cur + 1;
    if (next < 0 || next >= n) next = cur == 0 ? 1 : cur - 1;
    d[k] = {next};
    return true;
  }
};

}  // namespace

std::unique_ptr<Mutator> make_thread_binding_mutator() { return std::make_unique<ThreadBindingMutator>(); }

}  // namespace tuner::search
