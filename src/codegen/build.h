// Building kernels: lowered functions -> LLVM IR -> optimized object -> shared object (lld).
// A shared object (rather than an in-process JIT) is the one artifact that works alike for
// local measurement in a child process, remote workers, cross-compiled targets and the
// compiled model; see docs/ARCHITECTURE.md.
#pragma once

#include <string>
#include <vector>

#include "codegen/target.h"
#include "schedule/lower.h"

namespace tuner::codegen {

struct BuildOptions {
  int opt_level = 3;
  /// Keep the generated LLVM IR / assembly text in the result.
  bool keep_llvm_ir = false;
  bool keep_asm = false;
};

struct BuildResult {
  std::string so_path;
  std::string llvm_ir;  // when keep_llvm_ir
  std::string assembly; // when keep_asm
  double codegen_seconds = 0, link_seconds = 0;
};

/// Compiles `funcs` for `target` into the shared object `so_path`. Throws UserError when
/// the target cannot be compiled for, InternalError on a codegen bug.
BuildResult build_shared_object(const std::vector<schedule::LoweredFunc>& funcs,
                                const Target& target, const std::string& so_path,
                                const BuildOptions& opts = {});

/// A fresh private temporary directory (mkdtemp), removed by the caller when done.
std::string make_temp_dir(const std::string& prefix = "tuner");

}  // namespace tuner::codegen
