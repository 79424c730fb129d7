// One call from a scheduled DAG to a loaded, callable kernel (used by the CLI, tests and
// benchmarks; the measurement sandbox builds the same shared object in a child process).
#pragma once

#include <memory>
#include <string>

#include "codegen/build.h"
#include "runtime/module.h"
#include "schedule/lower.h"

namespace tuner::codegen {

struct CompiledKernel {
  std::string name;
  schedule::LoweredFunc lowered;
  BuildResult build;
  std::shared_ptr<runtime::Module> module;
  TunerKernelFn fn = nullptr;

  /// Runs the kernel on buffers (inputs then outputs).
  int32_t operator()(void** args, const TunerEnv& env) const { return fn(args, &env); }
};

struct CompileOptions {
  schedule::LowerOptions lower;
  BuildOptions build;
};

/// Lowers and builds a kernel for any LLVM target (e.g. a cross target) without loading it:
/// for its LLVM IR / assembly text (BuildOptions) and timings; the shared object is removed.
BuildResult build_kernel(const schedule::State& state, const Target& target,
                         const std::string& name = "kernel", const CompileOptions& opts = {});

/// Lowers, builds and loads a kernel for a target that runs on this machine.
CompiledKernel compile_kernel(const schedule::State& state, const Target& target,
                              const std::string& name = "kernel", const CompileOptions& opts = {});

}  // namespace tuner::codegen
