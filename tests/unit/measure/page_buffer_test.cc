// The measurement child's argument buffers: where they start and end within their pages.
#include "measure/child/page_buffer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

namespace tuner::measure {

namespace {
uintptr_t page_offset(const void* p) { return reinterpret_cast<uintptr_t>(p) % 4096; }
}  // namespace

TEST(PageBuffer, EndsAtItsGuardPage) {
  PageBuffer b(1000);
  EXPECT_EQ(page_offset(b.data()) % 64, 0u);
  // 1000 bytes round up to 1024: the last 64-byte line touches the guard page.
  EXPECT_EQ((page_offset(b.data()) + 1024) % 4096, 0u);
  std::memset(b.data(), 1, b.bytes());
}

TEST(PageBuffer, AGapMovesSameSizedBuffersApartWithinThePage) {
  // 128 KiB, a whole number of pages: without a gap every such buffer starts at offset 0,
  // and a kernel storing to one and loading from another at the same offset stalls.
  PageBuffer out(128 << 10), in(128 << 10, 1088);
  EXPECT_EQ(page_offset(out.data()), 0u);
  EXPECT_EQ(page_offset(in.data()), 4096u - 1088u);
  std::memset(in.data(), 1, in.bytes());
  in.make_read_only();
}

}  // namespace tuner::measure
