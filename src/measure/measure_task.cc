#include "measure/measure_task.h"

#include <fmt/format.h>

#include <string_view>

#include "support/hash.h"

namespace tuner::measure {

std::string MeasureTask::key() const {
  std::string k = fmt::format("{}|{}|{}", dag.hash_hex(), target.str(), input_seed);
  if (!inputs.empty()) {
    uint64_t h = fnv1a64("inputs");
    for (const auto& t : inputs)
      h = fnv1a64(std::string_view(static_cast<const char*>(t.raw()), t.bytes()), h);
    k += fmt::format("|{:016x}", h);
  }
  return k;
}

}  // namespace tuner::measure
