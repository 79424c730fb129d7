// Static memory planning: buffers alive at the same time never overlap; dead ones are reused.
#include <gtest/gtest.h>

#include "runtime/memory_plan.h"
#include "support/rng.h"

namespace tuner::runtime {

namespace {

void expect_valid(const std::vector<Lifetime>& bufs, const MemoryPlan& p) {
  ASSERT_EQ(p.offsets.size(), bufs.size());
  for (size_t i = 0; i < bufs.size(); ++i) {
    EXPECT_EQ(p.offsets[i] % 64, 0);
    EXPECT_LE(p.offsets[i] + bufs[i].bytes, p.arena_bytes);
    for (size_t j = 0; j < i; ++j) {
      bool alive_together = !(bufs[i].last < bufs[j].first || bufs[j].last < bufs[i].first);
      bool overlap = p.offsets[i] < p.offsets[j] + bufs[j].bytes &&
                     p.offsets[j] < p.offsets[i] + bufs[i].bytes;
      EXPECT_FALSE(alive_together && overlap) << "buffers " << i << " and " << j;
    }
  }
}

}  // namespace

TEST(MemoryPlan, AChainReusesTwoSlots) {
  // a -> b -> c -> d: each buffer lives from its producer to its one reader.
  std::vector<Lifetime> bufs = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 4}};
  MemoryPlan p = plan_memory(bufs);
  expect_valid(bufs, p);
  EXPECT_EQ(p.arena_bytes, 2 * 1024);  // two 64-aligned slots, not four
}

TEST(MemoryPlan, RandomLifetimesNeverOverlap) {
  Rng rng(3);
  for (int round = 0; round < 50; ++round) {
    std::vector<Lifetime> bufs;
    int64_t total = 0;
    for (int i = 0; i < 40; ++i) {
      int first = int(rng.uniform_int(0, 30));
      bufs.push_back({rng.uniform_int(1, 5000), first, first + int(rng.uniform_int(0, 8))});
      total += (bufs.back().bytes + 63) / 64 * 64;
    }
    MemoryPlan p = plan_memory(bufs);
    expect_valid(bufs, p);
    EXPECT_LE(p.arena_bytes, total);
  }
}

int64_t page_distance(int64_t a, int64_t b) {
  int64_t d = ((a - b) % kPageBytes + kPageBytes) % kPageBytes;
  return std::min(d, kPageBytes - d);
}

TEST(MemoryPlan, LargeBuffersAliveTogetherStartAtDifferentPageOffsets) {
  // A residual block's planes: three 128 KiB buffers (multiples of a page), the first read
  // by the third step along with the second's output. Placed end to end they would all start
  // at page offset 0.
  std::vector<Lifetime> bufs = {{128 << 10, 0, 2}, {128 << 10, 1, 2}, {128 << 10, 2, 3}};
  MemoryPlan p = plan_memory(bufs);
  expect_valid(bufs, p);
  for (size_t i = 0; i < bufs.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      EXPECT_GE(page_distance(p.offsets[i], p.offsets[j]), kMinPageDistance)
          << "buffers " << i << " and " << j;
  // At most a page of padding per buffer.
  EXPECT_LE(p.arena_bytes, 3 * (128 << 10) + 3 * kPageBytes);
}

TEST(MemoryPlan, RandomLargeBuffersKeepTheirPageOffsetsApart) {
  Rng rng(5);
  for (int round = 0; round < 30; ++round) {
    std::vector<Lifetime> bufs;
    for (int i = 0; i < 9; ++i) {
      int first = int(rng.uniform_int(0, 20));
      // Page multiples (the bad case) and odd sizes, a few KiB to a few hundred.
      int64_t bytes = rng.uniform_int(0, 1) ? rng.uniform_int(1, 64) * kPageBytes
                                            : rng.uniform_int(kPageBytes, 300000);
      bufs.push_back({bytes, first, first + int(rng.uniform_int(0, 3))});
    }
    MemoryPlan p = plan_memory(bufs);
    expect_valid(bufs, p);
    // Each placed buffer rules out 7 of a page's 64 aligned offsets: with 8 others there is
    // always one left.
    for (size_t i = 0; i < bufs.size(); ++i)
      for (size_t j = 0; j < i; ++j) {
        bool alive_together = !(bufs[i].last < bufs[j].first || bufs[j].last < bufs[i].first);
        if (alive_together) {
          EXPECT_GE(page_distance(p.offsets[i], p.offsets[j]), kMinPageDistance)
              << "round " << round << ", buffers " << i << " and " << j;
        }
      }
  }
}

// Buffers placed outside the plan (model inputs and outputs, a measured kernel's inputs) take
// the spread page offsets: apart from each other and from offset 0, where page-multiple
// buffers of the plan and the child's outputs start.
TEST(MemoryPlan, SpreadPageOffsetsAreApart) {
  for (size_t k = 0; k < 6; ++k) {
    EXPECT_EQ(spread_page_offset(k) % 64, 0);
    EXPECT_GE(page_distance(spread_page_offset(k), 0), kMinPageDistance) << k;
    for (size_t j = 0; j < k; ++j)
      EXPECT_GE(page_distance(spread_page_offset(k), spread_page_offset(j)), kMinPageDistance)
          << k << " and " << j;
  }
}

TEST(MemoryPlan, Empty) { EXPECT_EQ(plan_memory({}).arena_bytes, 0); }

}  // namespace tuner::runtime
