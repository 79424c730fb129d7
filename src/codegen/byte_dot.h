// te::Intrinsic::DotU8S8x4 in LLVM IR: x86's VNNI instruction vpdpbusd where the target has
// it (64 multiply-adds per instruction on 16 lanes), else shifts and multiplies, on any
// target and any lane count.
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <optional>

#include "codegen/target.h"
#include "te/expr.h"

namespace tuner::codegen {

/// A vector of int32 words whose lane i holds the uint8 bytes at element base + i x stride + j
/// of one buffer as byte j, j < bytes (the rest 0): a depthwise conv's row window
/// (ops::Conv2dAttrs::row_words), written as a sum of byte loads shifted into place. Byte j
/// may be conditional (inlined padding): `fill` where conds[j] is false in lane i.
struct ByteWindow {
  const te::BufferLoadNode* first = nullptr;  // byte 0's load (base = its ramp's base)
  int64_t stride = 1;
  int bytes = 0;
  std::vector<te::Expr> conds;  // per byte; undefined: always loaded
  int64_t fill = 0;
};

/// `word` as a ByteWindow: sum_j b_j x 2^(8j) for j < bytes <= 4, b_j an int32 cast of
/// load(buf, ramp(base + j, stride, lanes)) or if_then_else(cond, that, fill) (either order of
/// cast and select), each base's difference from byte 0's proved by simplification.
std::optional<ByteWindow> byte_window(const te::Expr& word);

/// The `lanes` words of window w whose byte 0 of lane 0 is at `first`, as one masked load of
/// the span and a byte shuffle (vpermb with AVX512-VBMI). `conds[j]` (null: none) is byte j's
/// condition: only elements some lane reads in bounds are read, and a lane whose own
/// condition is false takes w.fill, as the bytes' own code computed.
llvm::Value* emit_byte_window(llvm::IRBuilder<>& b, const ByteWindow& w, int lanes, llvm::Value* first,
                              const std::vector<llvm::Value*>& conds);

/// acc + dot_u8s8x4(a, w), lane by lane: i32 scalars or vectors of one type (a's bytes
/// unsigned, w's signed).
llvm::Value* emit_byte_dot(llvm::IRBuilder<>& b, llvm::Module& m, const ByteDotSupport& s, llvm::Value* acc,
                           llvm::Value* a, llvm::Value* w);

}  // namespace tuner::codegen
