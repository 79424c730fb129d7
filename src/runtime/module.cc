#include "runtime/module.h"

#include <dlfcn.h>
#include <unistd.h>

#include "support/error.h"

namespace tuner::runtime {

Module::Module(const std::string& path, int owned_fd) : path_(path), fd_(owned_fd) {
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_ && fd_ >= 0) ::close(fd_);
  USER_CHECK(handle_) << "cannot load kernel library " << path << ": " << dlerror();
}

Module::~Module() {
  if (handle_) dlclose(handle_);
  if (fd_ >= 0) ::close(fd_);
}

TunerKernelFn Module::kernel(const std::string& name) const {
  void* f = dlsym(handle_, name.c_str());
  USER_CHECK(f) << "kernel '" << name << "' not found in " << path_;
  return reinterpret_cast<TunerKernelFn>(f);
}

}  // namespace tuner::runtime
