// Static memory planning: intermediate buffers share one arena, reusing memory once a
// buffer's last reader has run.
#pragma once

#include <cstdint>
#include <vector>

namespace tuner::runtime {

/// A buffer to place: its size and the steps that write it first and read it last.
struct Lifetime {
  int64_t bytes = 0;
  int first = 0, last = 0;
};

struct MemoryPlan {
  std::vector<int64_t> offsets;  // 64-byte aligned, one per lifetime
  int64_t arena_bytes = 0;
};

/// Places the buffers so that no two with overlapping lifetimes overlap in memory (greedy:
/// largest first, lowest free offset).
MemoryPlan plan_memory(const std::vector<Lifetime>& buffers);

}  // namespace tuner::runtime
