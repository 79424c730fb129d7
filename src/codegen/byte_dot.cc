#include "codegen/byte_dot.h"

#include <llvm/IR/IntrinsicsX86.h>

namespace tuner::codegen {

namespace {

// The VNNI intrinsic for vectors of `lanes` int32, or none.
llvm::Intrinsic::ID vnni_intrinsic(const ByteDotSupport& s, unsigned lanes) {
  // LLVM selects the 128- and 256-bit forms as EVEX (avx512vnni + vl) or VEX (avxvnni).
  if (lanes == 16 && s.avx512_vnni) return llvm::Intrinsic::x86_avx512_vpdpbusd_512;
  if (lanes == 8 && (s.avx512_vnni || s.avx_vnni)) return llvm::Intrinsic::x86_avx512_vpdpbusd_256;
  if (lanes == 4 && (s.avx512_vnni || s.avx_vnni)) return llvm::Intrinsic::x86_avx512_vpdpbusd_128;
  return llvm::Intrinsic::not_intrinsic;
}

// x's lanes then y's (vectors of one type; x may already be several of them).
llvm::Value* concat(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y) {
  unsigned nx = llvm::cast<llvm::FixedVectorType>(x->getType())->getNumElements();
  unsigned ny = llvm::cast<llvm::FixedVectorType>(y->getType())->getNumElements();
  if (nx != ny) y = b.CreateShuffleVector(y, [&] {
    llvm::SmallVector<int, 64> idx;
    for (unsigned l = 0; l < nx; ++l) idx.push_back(l < ny ? int(l) : -1);
    return idx;
  }());
  llvm::SmallVector<int, 64> idx;
  for (unsigned l = 0; l < nx + ny; ++l) idx.push_back(int(l));
  return b.CreateShuffleVector(x, y, idx);
}

}  // namespace

llvm::Value* emit_byte_dot(llvm::IRBuilder<>& b, llvm::Module& m, const ByteDotSupport& s, llvm::Value* acc,
                           llvm::Value* a, llvm::Value* w) {
  llvm::Type* t = a->getType();
  auto* vec = llvm::dyn_cast<llvm::FixedVectorType>(t);
  unsigned lanes = vec ? vec->getNumElements() : 1;
  if (llvm::Intrinsic::ID id = vnni_intrinsic(s, lanes); vec && id != llvm::Intrinsic::not_intrinsic)
    return b.CreateCall(llvm::Intrinsic::getDeclaration(&m, id), {acc, a, w});
  // A register tile's row of several vectors (32 lanes) goes as native vectors.
  for (unsigned part : {16u, 8u}) {
    if (lanes <= part || lanes % part || vnni_intrinsic(s, part) == llvm::Intrinsic::not_intrinsic) continue;
    llvm::Value* out = nullptr;
    for (unsigned first = 0; first < lanes; first += part) {
      llvm::SmallVector<int, 16> idx;
      for (unsigned l = 0; l < part; ++l) idx.push_back(int(first + l));
      llvm::Value* r = emit_byte_dot(b, m, s, b.CreateShuffleVector(acc, idx), b.CreateShuffleVector(a, idx),
                                     b.CreateShuffleVector(w, idx));
      out = out ? concat(b, out, r) : r;
    }
    return out;
  }
  // Byte j: a's zero-extended, w's sign-extended; the products fit in int32.
  auto c = [&](uint64_t v) { return llvm::ConstantInt::get(t, v); };
  llvm::Value* sum = acc;
  for (unsigned j = 0; j < 4; ++j) {
    llvm::Value* aj = b.CreateAnd(j ? b.CreateLShr(a, c(8 * j)) : a, c(0xFF));
    llvm::Value* wj = b.CreateAShr(j < 3 ? b.CreateShl(w, c(24 - 8 * j)) : w, c(24));
    sum = b.CreateAdd(sum, b.CreateMul(aj, wj));
  }
  return sum;
}

}  // namespace tuner::codegen
