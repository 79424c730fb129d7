#include "search/mutator.h"

namespace tuner::search {

std::vector<std::pair<const schedule::Instruction*, size_t>> sampling_of(
    const schedule::Trace& trace, schedule::InstKind kind) {
  std::vector<std::pair<const schedule::Instruction*, size_t>> out;
  size_t k = 0;
  for (auto& in : trace.insts) {
    if (!in.is_sampling()) continue;
    if (in.kind == kind) out.push_back({&in, k});
    ++k;
  }
  return out;
}

}  // namespace tuner::search
