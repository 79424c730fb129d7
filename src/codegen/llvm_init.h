#pragma once

namespace tuner::codegen {
/// Registers LLVM's targets once per process (thread-safe).
void init_llvm();

/// While one is alive on a thread, running out of memory on that thread ends the process with
/// one error line and exit status 1. LLVM is built without exceptions: a std::bad_alloc thrown
/// inside it unwinds past its cleanups and crashes the process later.
class OutOfMemoryInLlvmIsFatal {
 public:
  OutOfMemoryInLlvmIsFatal();
  ~OutOfMemoryInLlvmIsFatal();
  OutOfMemoryInLlvmIsFatal(const OutOfMemoryInLlvmIsFatal&) = delete;
  OutOfMemoryInLlvmIsFatal& operator=(const OutOfMemoryInLlvmIsFatal&) = delete;
};
}  // namespace tuner::codegen
