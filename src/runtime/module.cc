#include "runtime/module.h"

#include <dlfcn.h>

#include "support/error.h"

namespace tuner::runtime {

Module::Module(const std::string& path) : path_(path) {
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  USER_CHECK(handle_) << "cannot load kernel library " << path << ": " << dlerror();
}

Module::~Module() {
  if (handle_) dlclose(handle_);
}

TunerKernelFn Module::kernel(const std::string& name) const {
  void* f = dlsym(handle_, name.c_str());
  USER_CHECK(f) << "kernel '" << name << "' not found in " << path_;
  return reinterpret_cast<TunerKernelFn>(f);
}

}  // namespace tuner::runtime
