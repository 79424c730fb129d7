// A persistent pool of worker threads for the parallel loops of generated kernels. The
// calling thread takes part; workers spin briefly, then sleep, between jobs. A loop is cut
// into a few chunks per thread. Thread t owns the t-th contiguous share of the chunks, so
// consecutive kernels that split their data alike find it in their own core's cache (a
// line another core wrote costs a cross-core transfer: 3x on mobilenet's 1x1 convs). A
// thread that runs out steals single chunks from the back of another's share: a thread the
// OS has not scheduled (a busy machine) delays the loop by one small chunk, not its share.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "runtime/kernel_abi.h"

namespace tuner::runtime {

class ThreadPool {
 public:
  /// A pool of `num_threads` threads in all (the caller counts as one; at most kMaxThreads).
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
  void worker(int self);
  // Runs thread `self`'s chunks of job `gen`, then steals others' until none is left.
  void work(int self, uint32_t gen);
  void run_chunk(int index);

  // One thread's share of the current job's chunks, on a cache line of its own.
  struct alignas(64) Range {
    std::atomic<uint64_t> word{0};
  };

  int num_threads_;
  std::vector<std::thread> threads_;
  // The current job, written by the caller before it stores the ranges and unchanged until
  // every chunk is done.
  TunerTaskFn fn_ = nullptr;
  void* closure_ = nullptr;
  int64_t n_ = 0;
  int chunks_ = 0;
  // Per thread: generation | next chunk | end, one word, so a thread still looking at an old
  // job can never claim a chunk of the next one.
  std::unique_ptr<Range[]> ranges_;
  uint32_t gen_ = 0;                   // the caller's count of jobs
  std::atomic<uint32_t> published_{0}; // the job whose ranges are set
  std::atomic<int> done_{0};           // chunks finished in this job
  std::atomic<uint64_t> wake_{0};      // bumped per job: workers wait on it
  std::atomic<bool> stop_{false};
};

}  // namespace tuner::runtime
