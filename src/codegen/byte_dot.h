// te::Intrinsic::DotU8S8x4 in LLVM IR: x86's VNNI instruction vpdpbusd where the target has
// it (64 multiply-adds per instruction on 16 lanes), else shifts and multiplies, on any
// target and any lane count.
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "codegen/target.h"

namespace tuner::codegen {

/// acc + dot_u8s8x4(a, w), lane by lane: i32 scalars or vectors of one type (a's bytes
/// unsigned, w's signed).
llvm::Value* emit_byte_dot(llvm::IRBuilder<>& b, llvm::Module& m, const ByteDotSupport& s, llvm::Value* acc,
                           llvm::Value* a, llvm::Value* w);

}  // namespace tuner::codegen
