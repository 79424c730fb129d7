// te::Intrinsic::DotU8S8x4 in LLVM IR: x86's VNNI instruction vpdpbusd where the target has
// it (64 multiply-adds per instruction on 16 lanes), else shifts and multiplies, on any
// target and any lane count.
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "codegen/target.h"

namespace tuner::codegen {

/// Which VNNI forms of vpdpbusd codegen may emit.
struct ByteDotSupport {
  bool avx512_vnni = false;  // avx512vnni (and avx512vl, which every such CPU has): 128-512 bits
  bool avx_vnni = false;     // avxvnni: 128 and 256 bits
};

/// The VNNI forms `t`'s code may use (none for cuda or non-x86).
ByteDotSupport byte_dot_support(const Target& t);

/// acc + dot_u8s8x4(a, w), lane by lane: i32 scalars or vectors of one type (a's bytes
/// unsigned, w's signed).
llvm::Value* emit_byte_dot(llvm::IRBuilder<>& b, llvm::Module& m, const ByteDotSupport& s, llvm::Value* acc,
                           llvm::Value* a, llvm::Value* w);

}  // namespace tuner::codegen
