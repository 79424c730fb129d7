// A buffer in its own pages, for the measurement child's kernel arguments. Its end touches an
// inaccessible guard page, so a kernel writing past the end of an output faults (and is
// reported) instead of silently corrupting the child; inputs and expected outputs are made
// read-only, so no candidate can change what the next one is checked against. An input may
// end `gap` bytes before its guard page: arguments that start at the same offset within a
// page make a kernel's loads wait on its earlier stores (runtime/memory_plan.h), so the
// child places them as the model's runtime does, apart.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <new>

namespace tuner::measure {

class PageBuffer {
 public:
  /// A writable buffer of `bytes` bytes (64-byte aligned) ending `gap` bytes (a multiple of
  /// 64) before a guard page; throws std::bad_alloc on failure.
  explicit PageBuffer(size_t bytes, size_t gap = 0) : bytes_(bytes) {
    size_t page = size_t(sysconf(_SC_PAGESIZE));
    size_t body = (bytes + 63) / 64 * 64;
    if (body == 0) body = 64;
    body += gap;
    data_pages_ = (body + page - 1) / page * page;
    map_size_ = data_pages_ + page;
    void* m = mmap(nullptr, map_size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) throw std::bad_alloc();
    base_ = static_cast<char*>(m);
    mprotect(base_ + data_pages_, page, PROT_NONE);
    data_ = base_ + data_pages_ - body;
  }
  ~PageBuffer() { munmap(base_, map_size_); }
  PageBuffer(const PageBuffer&) = delete;
  PageBuffer& operator=(const PageBuffer&) = delete;

  /// The first byte (64-byte aligned).
  void* data() { return data_; }
  const void* data() const { return data_; }
  /// Size as requested.
  size_t bytes() const { return bytes_; }
  /// From now on, any write faults.
  void make_read_only() { mprotect(base_, data_pages_, PROT_READ); }

 private:
  size_t bytes_;
  size_t data_pages_ = 0, map_size_ = 0;
  char* base_ = nullptr;
  char* data_ = nullptr;
};

}  // namespace tuner::measure
