#include "runtime/module.h"

#include <dlfcn.h>
#include <unistd.h>

#include "support/error.h"

namespace tuner::runtime {

std::string kernel_failure(int32_t status) {
  if (status == TUNER_KERNEL_OUT_OF_MEMORY)
    return "ran out of memory (a buffer of its own could not be allocated)";
  return "failed with code " + std::to_string(status);
}

Module::Module(const std::string& path, int owned_fd, std::string name)
    : path_(path), name_(name.empty() ? path : std::move(name)), fd_(owned_fd) {
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_) return;
  if (fd_ >= 0) ::close(fd_);
  // dlerror() starts with the path: a /proc/self/fd/N one means nothing to the user.
  std::string why = dlerror();
  if (why.rfind(path + ": ", 0) == 0) why.erase(0, path.size() + 2);
  USER_ERROR() << "cannot load " << name_ << ": " << why;
}

Module::~Module() {
  if (handle_) dlclose(handle_);
  if (fd_ >= 0) ::close(fd_);
}

TunerKernelFn Module::kernel(const std::string& name) const {
  void* f = dlsym(handle_, name.c_str());
  USER_CHECK(f) << "kernel '" << name << "' not found in " << name_;
  return reinterpret_cast<TunerKernelFn>(f);
}

}  // namespace tuner::runtime
