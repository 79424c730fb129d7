// Loading a compiled shared object of kernels.
#pragma once

#include <string>

#include "runtime/kernel_abi.h"

namespace tuner::runtime {

/// What a kernel's non-zero status means: "ran out of memory ...", "failed with code N".
std::string kernel_failure(int32_t status);

/// A loaded shared object; unloaded when destroyed.
class Module {
 public:
  /// Loads `path`; throws UserError naming it as `name` (default: the path) when it cannot be
  /// loaded. `owned_fd` (closed when the module is) keeps a /proc/self/fd/N path unique while
  /// the module is loaded: dlopen returns an already loaded object of the same name.
  explicit Module(const std::string& path, int owned_fd = -1, std::string name = "");
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  /// The kernel named `name`; throws UserError when absent.
  TunerKernelFn kernel(const std::string& name) const;

 private:
  void* handle_ = nullptr;
  std::string path_;
  std::string name_;  // for messages
  int fd_ = -1;
};

}  // namespace tuner::runtime
