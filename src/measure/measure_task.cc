#include "measure/measure_task.h"

#include <fmt/format.h>

#include <string_view>

#include "support/hash.h"

namespace tuner::measure {

std::string MeasureTask::key() const {
  // The seed only matters for random inputs: a task with explicit inputs keeps its key (and
  // its prepared reference) across rounds that are seeded differently.
  std::string k = inputs.empty() ? fmt::format("{}|{}|{}", dag.hash_hex(), target.str(), input_seed)
                                 : fmt::format("{}|{}", dag.hash_hex(), target.str());
  auto add_hash = [&](const char* what, const std::vector<ops::HostTensor>& ts) {
    if (ts.empty()) return;
    uint64_t h = fnv1a64(what);
    for (const auto& t : ts)
      h = fnv1a64(std::string_view(static_cast<const char*>(t.raw()), t.bytes()), h);
    k += fmt::format("|{}:{:016x}", what, h);
  };
  add_hash("inputs", inputs);
  add_hash("expected", expected);
  return k;
}

}  // namespace tuner::measure
