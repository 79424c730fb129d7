#include "runtime/memory_plan.h"

#include <algorithm>
#include <numeric>

namespace tuner::runtime {

MemoryPlan plan_memory(const std::vector<Lifetime>& buffers) {
  constexpr int64_t kAlign = 64;
  MemoryPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return buffers[a].bytes > buffers[b].bytes; });
  std::vector<size_t> placed;
  for (size_t i : order) {
    const Lifetime& b = buffers[i];
    int64_t size = (b.bytes + kAlign - 1) / kAlign * kAlign;
    // Memory ranges taken by placed buffers alive at the same time, by offset.
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (size_t j : placed) {
      const Lifetime& o = buffers[j];
      if (o.last < b.first || b.last < o.first) continue;
      busy.push_back({plan.offsets[j], plan.offsets[j] + (o.bytes + kAlign - 1) / kAlign * kAlign});
    }
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (const auto& [lo, hi] : busy) {
      if (offset + size <= lo) break;
      offset = std::max(offset, hi);
    }
    plan.offsets[i] = offset;
    plan.arena_bytes = std::max(plan.arena_bytes, offset + size);
    placed.push_back(i);
  }
  return plan;
}

}  // namespace tuner::runtime
