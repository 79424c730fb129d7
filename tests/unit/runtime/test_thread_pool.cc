#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "runtime/thread_pool.h"
#include "support/thread_count.h"

namespace tuner::runtime {
namespace {

struct Counts {
  std::vector<std::atomic<int>> hits;
  explicit Counts(int64_t n) : hits(size_t(n)) {}
};

void count(int64_t begin, int64_t end, void* c) {
  for (int64_t i = begin; i < end; ++i) static_cast<Counts*>(c)->hits[size_t(i)]++;
}

TEST(ThreadPool, EveryIterationRunsOnceWhateverTheSize) {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    for (int64_t n : {1, 2, 3, 7, 8, 64, 1000, 100003}) {
      for (int rep = 0; rep < 20; ++rep) {  // back to back: workers spin on the next job
        Counts c(n);
        pool.parallel_for(count, &c, n);
        for (int64_t i = 0; i < n; ++i)
          ASSERT_EQ(c.hits[size_t(i)].load(), 1) << threads << " threads, n " << n << ", i " << i;
      }
    }
  }
}

// Iterations run on a worker are slow (as if that thread were descheduled): the caller claims
// the chunks the worker has not taken, so the loop lasts about one slow chunk, not the
// worker's half of the loop (8 slow iterations here, 800 ms).
struct Slow {
  std::thread::id caller;
};
void slow_off_caller(int64_t begin, int64_t end, void* s) {
  if (std::this_thread::get_id() != static_cast<Slow*>(s)->caller)
    std::this_thread::sleep_for(std::chrono::milliseconds(100 * (end - begin)));
}

TEST(ThreadPool, ASlowThreadDelaysTheLoopByOneChunk) {
  ThreadPool pool(2);
  Slow s{std::this_thread::get_id()};
  auto t0 = std::chrono::steady_clock::now();
  pool.parallel_for(slow_off_caller, &s, 16);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(ms, 500) << "the caller did not take over the slow thread's chunks";
}

// Thread t runs the t-th contiguous share of a loop, in every loop: consecutive kernels that
// split their data alike find it in their own core's cache. A busy machine may make one
// thread steal from another, so a few attempts are allowed.
struct Owners {
  std::vector<std::thread::id> of;
};
void record_owner(int64_t begin, int64_t end, void* o) {
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  for (int64_t i = begin; i < end; ++i) static_cast<Owners*>(o)->of[size_t(i)] = std::this_thread::get_id();
}

TEST(ThreadPool, EachThreadRunsItsOwnShareOfEveryLoop) {
  ThreadPool pool(2);
  const int64_t n = 2 * ThreadPool::kChunksPerThread;
  bool seen = false;
  for (int attempt = 0; attempt < 5 && !seen; ++attempt) {
    Owners a{std::vector<std::thread::id>(size_t(n))}, b = a;
    pool.parallel_for(record_owner, &a, n);
    pool.parallel_for(record_owner, &b, n);
    bool halves = true;
    for (int64_t i = 0; i < n; ++i) {
      bool first = i < n / 2;
      halves &= (a.of[size_t(i)] == std::this_thread::get_id()) == first;
      halves &= a.of[size_t(i)] == b.of[size_t(i)];
    }
    seen = halves;
  }
  EXPECT_TRUE(seen) << "the caller did not run the first half and the worker the second";
}

}  // namespace
}  // namespace tuner::runtime

// TUNER_NUM_THREADS set but empty (`TUNER_NUM_THREADS= tuner ...`) means unset, not an error.
TEST(ThreadPool, AnEmptyThreadCountVariableIsUnset) {
  const char* old = std::getenv("TUNER_NUM_THREADS");
  std::string saved = old ? old : "";
  unsetenv("TUNER_NUM_THREADS");
  int unset = tuner::default_num_threads();
  setenv("TUNER_NUM_THREADS", "", 1);
  EXPECT_EQ(tuner::default_num_threads(), unset);
  setenv("TUNER_NUM_THREADS", "1", 1);
  EXPECT_EQ(tuner::default_num_threads(), 1);
  if (old) setenv("TUNER_NUM_THREADS", saved.c_str(), 1);
  else unsetenv("TUNER_NUM_THREADS");
}
