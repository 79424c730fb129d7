// The graph executor: loads a model artifact (kernels from memory, weights, the plan) and
// runs its steps over statically planned buffers on a persistent thread pool.
#pragma once

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "runtime/artifact.h"
#include "runtime/module.h"
#include "runtime/thread_pool.h"

namespace tuner::runtime {

class Executor {
 public:
  /// Loads the kernels of `a` and allocates every buffer; num_threads <= 0 means the default.
  explicit Executor(Artifact a, int num_threads = 0);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  const Plan& plan() const { return art_.plan; }
  size_t num_inputs() const { return art_.plan.inputs.size(); }
  size_t num_outputs() const { return art_.plan.outputs.size(); }
  const BufferDesc& input_desc(size_t i) const;
  const BufferDesc& output_desc(size_t i) const;
  /// Copies `bytes` bytes into input i: a UserError when the size is not the input's, or when
  /// the input holds indices out of their operator's range (the plan's index checks).
  void set_input(size_t i, const void* data, size_t bytes);
  /// Runs the model once; a kernel returning an error is a UserError naming the step.
  void run();
  /// The smallest dimension size input i indexes (0 when it is not an index input): random
  /// inputs stay below it.
  int64_t index_limit(size_t i) const;
  /// Output i after run().
  const void* output(size_t i) const;
  /// Seconds spent in each step by the last run() when profiling is on.
  void set_profiling(bool on) { profile_ = on; }
  const std::vector<double>& step_seconds() const { return step_seconds_; }
  int num_threads() const { return pool_->num_threads(); }

 private:
  void* buffer(int id) const { return ptrs_[size_t(id)]; }
  void check_indices(size_t input) const;

  Artifact art_;
  std::unique_ptr<Module> module_;
  std::unique_ptr<ThreadPool> pool_;
  TunerEnv env_{};
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  std::vector<std::unique_ptr<void, Free>> owned_;  // aligned allocations
  std::vector<void*> ptrs_;   // every buffer's address
  std::vector<TunerKernelFn> fns_;
  std::vector<std::vector<void*>> step_args_;
  bool profile_ = false;
  std::vector<double> step_seconds_;
};

}  // namespace tuner::runtime
