// A persistent pool of worker threads for the parallel loops of generated kernels. The
// calling thread takes part; workers spin briefly, then sleep, between jobs. A loop is cut
// into a few chunks per thread that threads claim as they come: a thread the OS has not
// scheduled (a busy machine) delays the loop by one small chunk, not by its share.
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
  /// Runs fn(begin, end, closure) over [0, n), in contiguous chunks claimed by the threads.
  void parallel_for(TunerTaskFn fn, void* closure, int64_t n);

  /// Chunks per thread of a parallel loop (when it has that many iterations).
  static constexpr int kChunksPerThread = 4;

  /// The environment generated kernels receive for this pool.
  TunerEnv env();

 private:
  void worker();
  // Claims and runs chunks of generation `gen` until none is left.
  void work(uint32_t gen);
  void run_chunk(int index);

  int num_threads_;
  std::vector<std::thread> threads_;
  // The current job, written by the caller before it publishes claim_ and unchanged until
  // every chunk is done.
  TunerTaskFn fn_ = nullptr;
  void* closure_ = nullptr;
  int64_t n_ = 0;
  int chunks_ = 0;
  // generation (32 bits) | chunk count (16) | next chunk to claim (16): one word, so a thread
  // still looking at an old job can never claim a chunk of the next one.
  std::atomic<uint64_t> claim_{0};
  uint32_t gen_ = 0;                   // the caller's count of jobs
  std::atomic<int> done_{0};           // chunks finished in this job
  std::atomic<uint64_t> wake_{0};      // bumped per job: workers wait on it
  std::atomic<bool> stop_{false};
};

/// Number of threads to use by default: TUNER_NUM_THREADS, else the machine's cores.
int default_num_threads();

}  // namespace tuner::runtime
