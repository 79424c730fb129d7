#include "runtime/thread_pool.h"

#include <cstdlib>
#include <cstring>
#include <string>

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

int default_num_threads() {
  if (const char* s = std::getenv("TUNER_NUM_THREADS")) {
    int n = std::atoi(s);
    if (n > 0) return n;
  }
  unsigned n = std::thread::hardware_concurrency();
  return n ? int(n) : 1;
}

ThreadPool::ThreadPool(int num_threads) : num_threads_(num_threads < 1 ? 1 : num_threads) {
  for (int i = 1; i < num_threads_; ++i) threads_.emplace_back([this, i] { worker(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  generation_.fetch_add(1);
  generation_.notify_all();
  for (auto& t : threads_) t.join();
}

TunerEnv ThreadPool::env() { return TunerEnv{pool_parallel_for, this, heap_alloc, heap_free}; }

void ThreadPool::run_chunk(int index) {
  int64_t begin = n_ * index / chunks_, end = n_ * (index + 1) / chunks_;
  if (begin < end) fn_(begin, end, closure_);
}

void ThreadPool::parallel_for(TunerTaskFn fn, void* closure, int64_t n) {
  if (n <= 0) return;
  int chunks = int(std::min<int64_t>(n, num_threads_));
  if (chunks == 1) {
    fn(0, n, closure);
    return;
  }
  fn_ = fn;
  closure_ = closure;
  n_ = n;
  chunks_ = chunks;
  pending_.store(chunks - 1, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  run_chunk(0);
  // Spin for the other chunks, but yield once they are late: on a busy machine a worker may
  // be waiting for this very core, and spinning would only delay it by a time slice.
  for (int spin = 0; pending_.load(std::memory_order_acquire) != 0; ++spin) {
    if (spin < 4000) cpu_relax();
    else std::this_thread::yield();
  }
}

void ThreadPool::worker(int index) {
  uint64_t seen = 0;
  for (;;) {
    // Spin a little (jobs come in bursts), then sleep until the generation changes.
    uint64_t g = generation_.load(std::memory_order_acquire);
    for (int spin = 0; g == seen && spin < 20000; ++spin) {
      cpu_relax();
      g = generation_.load(std::memory_order_acquire);
    }
    if (g == seen) {
      generation_.wait(seen, std::memory_order_acquire);
      g = generation_.load(std::memory_order_acquire);
    }
    seen = g;
    if (stop_.load()) return;
    if (index < chunks_) {
      run_chunk(index);
      pending_.fetch_sub(1, std::memory_order_acq_rel);
    }
  }
}

}  // namespace tuner::runtime
