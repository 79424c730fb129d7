#include "runtime/memory_plan.h"

#include <algorithm>
#include <numeric>

namespace tuner::runtime {

namespace {

constexpr int64_t kAlign = 64;

int64_t padded(int64_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// Distance between two addresses' offsets within a page, around the page.
int64_t page_distance(int64_t a, int64_t b) {
  int64_t d = ((a - b) % kPageBytes + kPageBytes) % kPageBytes;
  return std::min(d, kPageBytes - d);
}

}  // namespace

MemoryPlan plan_memory(const std::vector<Lifetime>& buffers) {
  MemoryPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return buffers[a].bytes > buffers[b].bytes; });
  std::vector<size_t> placed;
  for (size_t i : order) {
    const Lifetime& b = buffers[i];
    int64_t size = padded(b.bytes);
    bool large = b.bytes >= kPageBytes;
    // Memory ranges taken by placed buffers alive at the same time, by offset, and the page
    // offsets of the large ones among them.
    std::vector<std::pair<int64_t, int64_t>> busy;
    std::vector<int64_t> taken_page_offsets;
    for (size_t j : placed) {
      const Lifetime& o = buffers[j];
      if (o.last < b.first || b.last < o.first) continue;
      busy.push_back({plan.offsets[j], plan.offsets[j] + padded(o.bytes)});
      if (large && o.bytes >= kPageBytes) taken_page_offsets.push_back(plan.offsets[j]);
    }
    std::sort(busy.begin(), busy.end());
    // A large buffer starts at least kMinPageDistance from the page offsets of the large
    // ones alive with it (at most a page further than the lowest free offset).
    auto apart = [&](int64_t offset) {
      for (int64_t t : taken_page_offsets)
        if (page_distance(offset, t) < kMinPageDistance) return false;
      return true;
    };
    auto fits = [&](int64_t offset) {
      for (const auto& [lo, hi] : busy)
        if (offset < hi && lo < offset + size) return false;
      return true;
    };
    // Candidates: the arena's start and the end of each busy range, lowest first.
    std::vector<int64_t> starts = {0};
    for (const auto& r : busy) starts.push_back(r.second);
    std::sort(starts.begin(), starts.end());
    int64_t offset = -1;
    for (int64_t s : starts) {
      int64_t o = s;
      while (!apart(o) && o < s + kPageBytes) o += kAlign;
      if (!apart(o)) o = s;  // more large buffers alive than a page has room to separate
      if (fits(o)) {
        offset = o;
        break;
      }
    }
    plan.offsets[i] = offset;
    plan.arena_bytes = std::max(plan.arena_bytes, offset + size);
    placed.push_back(i);
  }
  return plan;
}

}  // namespace tuner::runtime
