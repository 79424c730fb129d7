// Inline float vector versions of exp, erf and tanh. LLVM lowers llvm.exp on a vector, and
// any libm call, to one scalar call per lane; these are straight-line vector code instead,
// so vectorized loops over softmax, sigmoid, GELU and tanh stay vectorized. Accuracy: exp
// within a few ulp on its whole range (inf above 88.72, 0 below -103.97, NaN kept); erf and
// tanh within 2e-7 absolute, well inside the 1e-3 / 2e-3 tolerances results are checked with.
#pragma once

#include <llvm/IR/IRBuilder.h>

namespace tuner::codegen {

/// True when `t` is a vector of float (the only type these functions take).
bool is_float_vector(llvm::Type* t);
/// exp(x) lane by lane: 2^k * p(r), k = round(x / ln 2), r = x - k ln 2 (Cody-Waite).
llvm::Value* vector_exp(llvm::IRBuilder<>& b, llvm::Value* x);
/// sigmoid(x) = 1 / (1 + exp(-x)), with an approximate reciprocal (within 2 ulp).
llvm::Value* vector_sigmoid(llvm::IRBuilder<>& b, llvm::Value* x);
/// erf(x): Abramowitz & Stegun 7.1.26 (absolute error <= 1.5e-7) with vector_exp.
llvm::Value* vector_erf(llvm::IRBuilder<>& b, llvm::Value* x);
/// tanh(x) = sign(x) (1 - 2 / (exp(2|x|) + 1)).
llvm::Value* vector_tanh(llvm::IRBuilder<>& b, llvm::Value* x);

}  // namespace tuner::codegen
