// Static memory planning: intermediate buffers share one arena, reusing memory once a
// buffer's last reader has run. Large buffers alive together start at different offsets
// within a page: a kernel that stores to one and then loads from another at the same page
// offset stalls on a false store-to-load dependence (4K aliasing; the conv+add of
// examples/small_cnn, whose 32x32 channel planes are 4 KiB apart, ran 27 % slower).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tuner::runtime {

/// A buffer to place: its size and the steps that write it first and read it last.
struct Lifetime {
  int64_t bytes = 0;
  int first = 0, last = 0;
};

/// Page size for the page-offset rule, and how far apart (bytes) large buffers' page offsets are.
inline constexpr int64_t kPageBytes = 4096;
inline constexpr int64_t kMinPageDistance = 256;

/// The page offset for the k-th of a few buffers placed outside the plan (a model's inputs and
/// outputs; a measured kernel's inputs): odd multiples of 64 bytes, 640 apart for the first
/// six, never 0 (where page-multiple buffers of the plan and the child's outputs start).
constexpr int64_t spread_page_offset(std::size_t k) { return int64_t(320 + 640 * k) % kPageBytes; }

struct MemoryPlan {
  std::vector<int64_t> offsets;  // 64-byte aligned, one per lifetime
  int64_t arena_bytes = 0;
};

/// Places the buffers so that no two with overlapping lifetimes overlap in memory (greedy:
/// largest first, lowest free offset), and no two such of a page or more start at nearby
/// page offsets when the page has room to separate them.
MemoryPlan plan_memory(const std::vector<Lifetime>& buffers);

}  // namespace tuner::runtime
