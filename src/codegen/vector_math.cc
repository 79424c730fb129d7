#include "codegen/vector_math.h"

#include <llvm/IR/Intrinsics.h>

#include <limits>

namespace tuner::codegen {

namespace {

llvm::Value* c(llvm::Type* t, double v) { return llvm::ConstantFP::get(t, v); }

llvm::Value* call(llvm::IRBuilder<>& b, llvm::Intrinsic::ID id, std::vector<llvm::Value*> args) {
  return b.CreateIntrinsic(id, {args[0]->getType()}, args);
}

// a * t + b, evaluated as an FMA-friendly expression.
llvm::Value* madd(llvm::IRBuilder<>& b, llvm::Value* a, llvm::Value* t, llvm::Value* k) {
  return b.CreateFAdd(b.CreateFMul(a, t), k);
}

// x * 2^k for integer-valued float k in [-150, 128], as two multiplications by exact powers
// of two (each within the normal range), so that k = 128 and subnormal results come out right.
llvm::Value* scale_pow2(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* k) {
  llvm::Type* ft = k->getType();
  auto* vt = llvm::cast<llvm::FixedVectorType>(ft);
  llvm::Type* it = llvm::FixedVectorType::get(b.getInt32Ty(), vt->getNumElements());
  llvm::Value* k1 = call(b, llvm::Intrinsic::floor, {b.CreateFMul(k, c(ft, 0.5))});
  llvm::Value* k2 = b.CreateFSub(k, k1);
  auto bits = [&](llvm::Value* e) {  // (e + 127) << 23, e in [-75, 64]
    llvm::Value* i = b.CreateFPToSI(e, it);
    i = b.CreateAdd(i, llvm::ConstantInt::get(it, 127));
    return b.CreateBitCast(b.CreateShl(i, llvm::ConstantInt::get(it, 23)), ft);
  };
  return b.CreateFMul(b.CreateFMul(x, bits(k1)), bits(k2));
}

}  // namespace

bool is_float_vector(llvm::Type* t) {
  auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(t);
  return vt && vt->getElementType()->isFloatTy();
}

llvm::Value* vector_exp(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Type* t = x->getType();
  // Clamp first (maxnum/minnum drop NaN, so no lane reaches fptosi as NaN); NaN restored last.
  llvm::Value* xc = call(b, llvm::Intrinsic::maxnum, {x, c(t, -104.0)});
  xc = call(b, llvm::Intrinsic::minnum, {xc, c(t, 88.8)});
  llvm::Value* k = call(b, llvm::Intrinsic::rint, {b.CreateFMul(xc, c(t, 1.44269504088896341))});
  // r = x - k ln2, ln2 split so that k * 0.693359375 is exact.
  llvm::Value* r = b.CreateFSub(xc, b.CreateFMul(k, c(t, 0.693359375)));
  r = b.CreateFSub(r, b.CreateFMul(k, c(t, -2.12194440e-4)));
  // exp(r) on |r| <= ln2 / 2: 1 + r + r^2 (p5 + r (p4 + ...)) (Cephes' expf coefficients).
  llvm::Value* p = c(t, 1.9875691500e-4);
  for (double q : {1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1,
                   5.0000001201e-1})
    p = madd(b, p, r, c(t, q));
  llvm::Value* e = b.CreateFAdd(b.CreateFAdd(b.CreateFMul(b.CreateFMul(r, r), p), r), c(t, 1.0));
  e = scale_pow2(b, e, k);
  const double inf = std::numeric_limits<double>::infinity();
  e = b.CreateSelect(b.CreateFCmpOGT(x, c(t, 88.72283905206835)), c(t, inf), e);
  e = b.CreateSelect(b.CreateFCmpOLT(x, c(t, -103.972)), c(t, 0.0), e);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, e);
}

llvm::Value* vector_erf(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Type* t = x->getType();
  llvm::Value* ax = call(b, llvm::Intrinsic::fabs, {x});
  llvm::Value* tt = b.CreateFDiv(c(t, 1.0), madd(b, ax, c(t, 0.3275911), c(t, 1.0)));
  llvm::Value* p = c(t, 1.061405429);
  for (double q : {-1.453152027, 1.421413741, -0.284496736, 0.254829592}) p = madd(b, p, tt, c(t, q));
  p = b.CreateFMul(p, tt);
  llvm::Value* e = vector_exp(b, b.CreateFNeg(b.CreateFMul(ax, ax)));
  llvm::Value* y = b.CreateFSub(c(t, 1.0), b.CreateFMul(p, e));
  return call(b, llvm::Intrinsic::copysign, {y, x});
}

llvm::Value* vector_tanh(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Type* t = x->getType();
  llvm::Value* ax = call(b, llvm::Intrinsic::fabs, {x});
  llvm::Value* e = vector_exp(b, b.CreateFMul(ax, c(t, 2.0)));
  llvm::Value* y = b.CreateFSub(c(t, 1.0), b.CreateFDiv(c(t, 2.0), b.CreateFAdd(e, c(t, 1.0))));
  return call(b, llvm::Intrinsic::copysign, {y, x});
}

}  // namespace tuner::codegen
