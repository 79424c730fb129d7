#include "measure/measure_task.h"

#include <fmt/format.h>

#include <string_view>

#include "support/hash.h"

namespace tuner::measure {

std::string MeasureTask::key() const {
  std::string k = fmt::format("{}|{}|{}", dag.hash_hex(), target.str(), input_seed);
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
