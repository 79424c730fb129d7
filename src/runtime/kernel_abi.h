// The ABI between generated kernels and the runtime, shared by codegen and the loader.
// A kernel is `int32_t name(void** args, const TunerEnv* env)`: args are the buffer pointers
// (inputs, then outputs; 64-byte aligned), env gives it the thread pool and a heap; it returns
// a TunerKernelStatus. Passing these as pointers keeps generated shared objects free of
// undefined runtime symbols.
#pragma once

#include <cstdint>

extern "C" {

/// A parallel loop body: runs iterations [begin, end) of a loop.
typedef void (*TunerTaskFn)(int64_t begin, int64_t end, void* closure);

struct TunerEnv {
  /// Runs fn over [0, n) split in contiguous chunks across the pool; returns when all are done.
  void (*parallel_for)(void* pool, TunerTaskFn fn, void* closure, int64_t n);
  void* pool;
  void* (*alloc)(int64_t bytes);
  void (*free)(void* ptr);
};

/// What a kernel returns.
enum TunerKernelStatus {
  TUNER_KERNEL_OK = 0,
  /// env->alloc returned NULL: the kernel freed what it had allocated and stopped (its outputs
  /// are incomplete).
  TUNER_KERNEL_OUT_OF_MEMORY = 1,
};

typedef int32_t (*TunerKernelFn)(void** args, const TunerEnv* env);
}
