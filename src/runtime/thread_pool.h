// A persistent pool of worker threads for the parallel loops of generated kernels. The
// calling thread takes part; workers spin briefly, then sleep, between jobs.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "runtime/kernel_abi.h"

namespace tuner::runtime {

class ThreadPool {
 public:
  /// A pool of `num_threads` threads in all (the caller counts as one).
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }
  /// Runs fn(begin, end, closure) over [0, n) in one contiguous chunk per thread.
  void parallel_for(TunerTaskFn fn, void* closure, int64_t n);

  /// The environment generated kernels receive for this pool.
  TunerEnv env();

 private:
  void worker(int index);
  void run_chunk(int index);

  int num_threads_;
  std::vector<std::thread> threads_;
  // The current job; published by bumping generation_.
  TunerTaskFn fn_ = nullptr;
  void* closure_ = nullptr;
  int64_t n_ = 0;
  int chunks_ = 0;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
};

/// Number of threads to use by default: TUNER_NUM_THREADS, else the machine's cores.
int default_num_threads();

}  // namespace tuner::runtime
