#pragma once

namespace tuner::codegen {
/// Registers LLVM's targets once per process (thread-safe).
void init_llvm();
}  // namespace tuner::codegen
