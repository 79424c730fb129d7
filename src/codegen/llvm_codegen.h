// LLVM IR generation from lowered loop IR.
#pragma once

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <memory>
#include <vector>

#include "codegen/byte_dot.h"
#include "schedule/lower.h"

namespace tuner::codegen {

/// One LLVM module holding every function (see runtime/kernel_abi.h for their ABI); `dot`
/// says which VNNI instructions the target has.
std::unique_ptr<llvm::Module> codegen_llvm(const std::vector<schedule::LoweredFunc>& funcs,
                                           llvm::LLVMContext& ctx, const std::string& module_name,
                                           const ByteDotSupport& dot = {});

}  // namespace tuner::codegen
