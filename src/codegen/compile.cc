#include "codegen/compile.h"

#include <unistd.h>

#include "support/error.h"

namespace tuner::codegen {

BuildResult build_kernel(const schedule::State& state, const Target& target,
                         const std::string& name, const CompileOptions& opts) {
  schedule::LoweredFunc lowered = schedule::lower(state, name, opts.lower);
  std::string dir = make_temp_dir();
  std::string so = dir + "/" + name + ".so";
  BuildResult r;
  try {
    r = build_shared_object({lowered}, target, so, opts.build);
  } catch (...) {
    unlink(so.c_str());
    rmdir(dir.c_str());
    throw;
  }
  unlink(so.c_str());
  rmdir(dir.c_str());
  r.so_path.clear();
  return r;
}

CompiledKernel compile_kernel(const schedule::State& state, const Target& target,
                              const std::string& name, const CompileOptions& opts) {
  target.check_runs_here("the kernel");
  CompiledKernel k;
  k.name = name;
  k.lowered = schedule::lower(state, name, opts.lower);
  std::string dir = make_temp_dir();
  std::string so = dir + "/" + name + ".so";
  try {
    k.build = build_shared_object({k.lowered}, target, so, opts.build);
    k.module = std::make_shared<runtime::Module>(so);
  } catch (...) {
    unlink(so.c_str());
    rmdir(dir.c_str());
    throw;
  }
  // The mapping outlives the file: nothing is left behind in the temporary directory.
  unlink(so.c_str());
  rmdir(dir.c_str());
  k.fn = k.module->kernel(name);
  return k;
}

}  // namespace tuner::codegen
