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

// 2^e as a float, e an integer-valued float in [-126, 127] ((e + 127) << 23).
llvm::Value* pow2(llvm::IRBuilder<>& b, llvm::Value* e) {
  auto* vt = llvm::cast<llvm::FixedVectorType>(e->getType());
  llvm::Type* it = llvm::FixedVectorType::get(b.getInt32Ty(), vt->getNumElements());
  llvm::Value* i = b.CreateAdd(b.CreateFPToSI(e, it), llvm::ConstantInt::get(it, 127));
  return b.CreateBitCast(b.CreateShl(i, llvm::ConstantInt::get(it, 23)), vt);
}

// x * 2^k for integer-valued float k in [-150, 128], as two multiplications by exact powers
// of two (each within the normal range), so that k = 128 and subnormal results come out right.
llvm::Value* scale_pow2(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* k) {
  llvm::Value* k1 = call(b, llvm::Intrinsic::floor, {b.CreateFMul(k, c(k->getType(), 0.5))});
  return b.CreateFMul(b.CreateFMul(x, pow2(b, k1)), pow2(b, b.CreateFSub(k, k1)));
}

// exp(x) = 2^k exp(r): returns exp(r), r = x - k ln2 in [-ln2/2, ln2/2]; sets *k to round(x /
// ln2) and *kbits to a float whose low mantissa bits hold k (x / ln2 + 1.5 * 2^23 rounds to
// an integer there: one FMA for rint, and a NaN stays NaN with no fptosi, poison on NaN).
llvm::Value* exp_reduced(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value** k,
                         llvm::Value** kbits = nullptr) {
  llvm::Type* t = x->getType();
  llvm::Value* kf = madd(b, x, c(t, 1.44269504088896341), c(t, 12582912.0));
  *k = b.CreateFSub(kf, c(t, 12582912.0));
  if (kbits) *kbits = kf;
  // r = x - k ln2, ln2 split so that k * 0.693359375 is exact.
  llvm::Value* r = b.CreateFSub(x, b.CreateFMul(*k, c(t, 0.693359375)));
  r = b.CreateFSub(r, b.CreateFMul(*k, c(t, -2.12194440e-4)));
  // 1 + r + r^2 (p5 + r (p4 + ...)) (Cephes' expf coefficients).
  llvm::Value* p = madd(b, r, c(t, 1.9875691500e-4), c(t, 1.3981999507e-3));
  for (double q : {8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1})
    p = madd(b, p, r, c(t, q));
  return b.CreateFAdd(b.CreateFAdd(b.CreateFMul(b.CreateFMul(r, r), p), r), c(t, 1.0));
}

// exp(x) for x in [-88, 88] (2^k needs one scaling: k << 23 is the low bits of kbits shifted,
// plus the bias; 2^-127 comes out 0). NaN gives NaN.
llvm::Value* exp_in_range(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Value *k = nullptr, *kbits = nullptr;
  llvm::Value* e = exp_reduced(b, x, &k, &kbits);
  auto* vt = llvm::cast<llvm::FixedVectorType>(x->getType());
  llvm::Type* it = llvm::FixedVectorType::get(b.getInt32Ty(), vt->getNumElements());
  llvm::Value* i = b.CreateShl(b.CreateBitCast(kbits, it), llvm::ConstantInt::get(it, 23));
  i = b.CreateAdd(i, llvm::ConstantInt::get(it, 127 << 23));
  return b.CreateFMul(e, b.CreateBitCast(i, vt));
}

// min(x, hi) and max(lo, min(x, hi)) with NaN kept, unlike minnum/maxnum (on x86 one min or
// max each, which return their second operand on NaN).
llvm::Value* at_most(llvm::IRBuilder<>& b, llvm::Value* x, double hi) {
  llvm::Value* h = c(x->getType(), hi);
  return b.CreateSelect(b.CreateFCmpOGT(x, h), h, x);
}
llvm::Value* clamp(llvm::IRBuilder<>& b, llvm::Value* x, double lo, double hi) {
  x = at_most(b, x, hi);
  llvm::Value* l = c(x->getType(), lo);
  return b.CreateSelect(b.CreateFCmpOLT(x, l), l, x);
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
  llvm::Value* k = nullptr;
  llvm::Value* e = exp_reduced(b, xc, &k);
  e = scale_pow2(b, e, k);
  const double inf = std::numeric_limits<double>::infinity();
  e = b.CreateSelect(b.CreateFCmpOGT(x, c(t, 88.72283905206835)), c(t, inf), e);
  e = b.CreateSelect(b.CreateFCmpOLT(x, c(t, -103.972)), c(t, 0.0), e);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, e);
}

llvm::Value* vector_sigmoid(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Type* t = x->getType();
  // Past +-88 the sigmoid is within 1e-38 of 0 or 1. 1 + exp(-x) is then finite and at least
  // 1, so the reciprocal may be the CPU's estimate refined by Newton steps (arcp and ninf;
  // build.cc sets the steps): about 1 ulp, against a divide 3-4x slower. (tanh and erf keep
  // the divide: their 1 - q loses the estimate's last bit, and tanh(0) must be 0.)
  llvm::Value* e = exp_in_range(b, clamp(b, b.CreateFNeg(x), -88.0, 88.0));
  auto* s = llvm::cast<llvm::Instruction>(b.CreateFDiv(c(t, 1.0), b.CreateFAdd(c(t, 1.0), e)));
  s->setHasAllowReciprocal(true);
  s->setHasNoInfs(true);  // NaN passes through the estimate and the Newton step
  return s;
}

llvm::Value* vector_erf(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Type* t = x->getType();
  // erf(5) is 1 in float (a NaN flows through to the result).
  llvm::Value* ax = at_most(b, call(b, llvm::Intrinsic::fabs, {x}), 5.0);
  llvm::Value* tt = b.CreateFDiv(c(t, 1.0), madd(b, ax, c(t, 0.3275911), c(t, 1.0)));
  llvm::Value* p = c(t, 1.061405429);
  for (double q : {-1.453152027, 1.421413741, -0.284496736, 0.254829592}) p = madd(b, p, tt, c(t, q));
  p = b.CreateFMul(p, tt);
  llvm::Value* e = exp_in_range(b, b.CreateFNeg(b.CreateFMul(ax, ax)));
  llvm::Value* y = b.CreateFSub(c(t, 1.0), b.CreateFMul(p, e));
  return call(b, llvm::Intrinsic::copysign, {y, x});
}

llvm::Value* vector_tanh(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Type* t = x->getType();
  // tanh(9) is 1 in float (a NaN flows through to the result).
  llvm::Value* ax = at_most(b, call(b, llvm::Intrinsic::fabs, {x}), 9.0);
  llvm::Value* e = exp_in_range(b, b.CreateFMul(ax, c(t, 2.0)));
  llvm::Value* y = b.CreateFSub(c(t, 1.0), b.CreateFDiv(c(t, 2.0), b.CreateFAdd(e, c(t, 1.0))));
  return call(b, llvm::Intrinsic::copysign, {y, x});
}

}  // namespace tuner::codegen
