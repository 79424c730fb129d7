#include "runtime/thread_pool.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "support/thread_count.h"

namespace tuner::runtime {

namespace {

void pool_parallel_for(void* pool, TunerTaskFn fn, void* closure, int64_t n) {
  static_cast<ThreadPool*>(pool)->parallel_for(fn, closure, n);
}

void* heap_alloc(int64_t bytes) {
  void* p = nullptr;
  if (posix_memalign(&p, 64, size_t(bytes > 0 ? bytes : 64)) != 0) return nullptr;
  return p;
}

void heap_free(void* p) { std::free(p); }

inline void cpu_relax() {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

ThreadPool::ThreadPool(int num_threads)
    : num_threads_(num_threads < 1 ? 1 : check_thread_count(num_threads, "thread pool")),
      ranges_(std::make_unique<Range[]>(size_t(num_threads_))) {
  for (int i = 1; i < num_threads_; ++i) threads_.emplace_back([this, i] { worker(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  wake_.fetch_add(1);
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

TunerEnv ThreadPool::env() { return TunerEnv{pool_parallel_for, this, heap_alloc, heap_free}; }

namespace {

// A range word: generation (32 bits) | first unclaimed chunk (16) | end (16).
constexpr uint64_t pack(uint32_t gen, uint64_t begin, uint64_t end) {
  return (uint64_t(gen) << 32) | (begin << 16) | end;
}

// Takes one chunk of generation `gen` off the front (the owner) or the back (a thief).
bool claim(std::atomic<uint64_t>& word, uint32_t gen, bool front, int* chunk) {
  uint64_t v = word.load(std::memory_order_acquire);
  for (;;) {
    uint64_t begin = (v >> 16) & 0xffff, end = v & 0xffff;
    if (uint32_t(v >> 32) != gen || begin >= end) return false;
    uint64_t next = front ? pack(gen, begin + 1, end) : pack(gen, begin, end - 1);
    if (word.compare_exchange_weak(v, next, std::memory_order_acq_rel,
                                   std::memory_order_acquire)) {
      *chunk = int(front ? begin : end - 1);
      return true;
    }
  }
}

}  // namespace

void ThreadPool::run_chunk(int index) {
  int64_t begin = n_ * index / chunks_, end = n_ * (index + 1) / chunks_;
  if (begin < end) fn_(begin, end, closure_);
  done_.fetch_add(1, std::memory_order_release);
}

void ThreadPool::work(int self, uint32_t gen) {
  int chunk;
  while (claim(ranges_[size_t(self)].word, gen, true, &chunk)) run_chunk(chunk);
  for (int k = 1; k < num_threads_; ++k) {
    auto& victim = ranges_[size_t((self + k) % num_threads_)].word;
    while (claim(victim, gen, false, &chunk)) run_chunk(chunk);
  }
}

void ThreadPool::parallel_for(TunerTaskFn fn, void* closure, int64_t n) {
  if (n <= 0) return;
  int chunks = int(std::min<int64_t>({n, int64_t(num_threads_) * kChunksPerThread, 0xffff}));
  if (num_threads_ == 1 || chunks == 1) {
    fn(0, n, closure);
    return;
  }
  fn_ = fn;
  closure_ = closure;
  n_ = n;
  chunks_ = chunks;
  done_.store(0, std::memory_order_relaxed);
  uint32_t gen = ++gen_;
  for (int t = 0; t < num_threads_; ++t)
    ranges_[size_t(t)].word.store(
        pack(gen, uint64_t(chunks) * t / num_threads_, uint64_t(chunks) * (t + 1) / num_threads_),
        std::memory_order_release);
  published_.store(gen, std::memory_order_release);
  wake_.fetch_add(1, std::memory_order_release);
  wake_.notify_all();
  work(0, gen);
  // Spin for chunks other threads hold, but yield once they are late: on a busy machine a
  // worker may be waiting for this very core, and spinning would only delay it by a time slice.
  for (int spin = 0; done_.load(std::memory_order_acquire) != chunks; ++spin) {
    if (spin < 4000) cpu_relax();
    else std::this_thread::yield();
  }
}

void ThreadPool::worker(int self) {
  uint64_t seen = 0;
  for (;;) {
    // Spin a little (jobs come in bursts), then sleep until a job is published.
    uint64_t w = wake_.load(std::memory_order_acquire);
    for (int spin = 0; w == seen && spin < 20000; ++spin) {
      cpu_relax();
      w = wake_.load(std::memory_order_acquire);
    }
    if (w == seen) {
      wake_.wait(seen, std::memory_order_acquire);
      w = wake_.load(std::memory_order_acquire);
    }
    seen = w;
    if (stop_.load()) return;
    work(self, published_.load(std::memory_order_acquire));
  }
}

}  // namespace tuner::runtime
