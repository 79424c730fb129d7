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

TEST(MemoryPlan, Empty) { EXPECT_EQ(plan_memory({}).arena_bytes, 0); }

}  // namespace tuner::runtime
