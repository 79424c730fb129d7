// Element-wise operators (tag "injective"): unary activations and math, binary arithmetic and
// comparisons with numpy broadcasting, where, cast. Float-only ops check their dtype.
#pragma once

#include <functional>
#include <string>

#include "te/tensor.h"

namespace tuner::ops {

/// out = f(x) element-wise (the generic building block of the unary ops).
te::Tensor map_unary(const te::Tensor& x, const std::function<te::Expr(const te::Expr&)>& f,
                     const std::string& name);
/// out = f(a, b) with numpy broadcasting; a and b must share a dtype.
te::Tensor map_binary(const te::Tensor& a, const te::Tensor& b,
                      const std::function<te::Expr(const te::Expr&, const te::Expr&)>& f,
                      const std::string& name);

/// The activations' formulas on one value, for ops that apply them inside a larger
/// expression (the recurrent layers' gates); the tensor ops below map them.
namespace scalar {
te::Expr relu(const te::Expr& v);
te::Expr sigmoid(const te::Expr& v);
te::Expr tanh(const te::Expr& v);
te::Expr hardsigmoid(const te::Expr& v, double alpha, double beta);
te::Expr leaky_relu(const te::Expr& v, double alpha);
/// x / (1 + |x|).
te::Expr softsign(const te::Expr& v);
}  // namespace scalar

/// max(x, 0).
te::Tensor relu(const te::Tensor& x, const std::string& name = "relu");
/// min(max(x, lo), hi).
te::Tensor clip(const te::Tensor& x, double lo, double hi, const std::string& name = "clip");
/// 1 / (1 + exp(-x)).
te::Tensor sigmoid(const te::Tensor& x, const std::string& name = "sigmoid");
/// tanh(x).
te::Tensor tanh(const te::Tensor& x, const std::string& name = "tanh");
/// exp(x).
te::Tensor exp(const te::Tensor& x, const std::string& name = "exp");
/// Natural logarithm.
te::Tensor log(const te::Tensor& x, const std::string& name = "log");
/// Square root.
te::Tensor sqrt(const te::Tensor& x, const std::string& name = "sqrt");
/// Error function.
te::Tensor erf(const te::Tensor& x, const std::string& name = "erf");
/// 0.5 x (1 + erf(x / sqrt 2)) (the exact, erf form).
te::Tensor gelu(const te::Tensor& x, const std::string& name = "gelu");
/// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) (ONNX Gelu's approximate = "tanh").
te::Tensor gelu_tanh(const te::Tensor& x, const std::string& name = "gelu_tanh");
/// x * sigmoid(x).
te::Tensor silu(const te::Tensor& x, const std::string& name = "silu");

/// x * min(max(x + 3, 0), 6) / 6.
te::Tensor hardswish(const te::Tensor& x, const std::string& name = "hardswish");
/// max(0, min(1, alpha x + beta)).
te::Tensor hardsigmoid(const te::Tensor& x, double alpha = 0.2, double beta = 0.5,
                       const std::string& name = "hardsigmoid");
/// x * hardsigmoid(x, alpha, beta): hardswish as exported with HardSigmoid and Mul.
te::Tensor gated_hardsigmoid(const te::Tensor& x, double alpha, double beta,
                             const std::string& name = "gated_hardsigmoid");
/// x for x >= 0, alpha x below.
te::Tensor leaky_relu(const te::Tensor& x, double alpha = 0.01,
                      const std::string& name = "leaky_relu");
/// -x.
te::Tensor neg(const te::Tensor& x, const std::string& name = "neg");
/// |x|.
te::Tensor abs(const te::Tensor& x, const std::string& name = "abs");

/// a + b.
te::Tensor add(const te::Tensor& a, const te::Tensor& b, const std::string& name = "add");
/// a - b.
te::Tensor sub(const te::Tensor& a, const te::Tensor& b, const std::string& name = "sub");
/// a * b.
te::Tensor mul(const te::Tensor& a, const te::Tensor& b, const std::string& name = "mul");
/// a / b; integers truncate toward zero (like C and ONNX), and divide by 0 into 0.
te::Tensor div(const te::Tensor& a, const te::Tensor& b, const std::string& name = "div");
/// Integer a / b rounded toward zero. Total: a / 0 is 0 (as in NumPy), INT_MIN / -1 wraps;
/// neither traps (x86 faults on both, killing the process running the kernel).
te::Expr integer_div(const te::Expr& a, const te::Expr& b);
/// Integer a mod b with the sign of b (ONNX Mod, fmod 0) or of a (fmod 1); a mod 0 is 0.
te::Expr integer_mod(const te::Expr& a, const te::Expr& b, bool sign_of_dividend);
/// a ** b (floating point only).
te::Tensor pow(const te::Tensor& a, const te::Tensor& b, const std::string& name = "pow");
/// a ** b of integers a (its dtype) and b (any integer dtype), exact and wrapping on overflow.
/// A negative b gives 1 / a truncated: 1, -1 or 0.
te::Tensor integer_pow(const te::Tensor& a, const te::Tensor& b, const std::string& name);
/// max(a, b).
te::Tensor maximum(const te::Tensor& a, const te::Tensor& b, const std::string& name = "maximum");
/// min(a, b).
te::Tensor minimum(const te::Tensor& a, const te::Tensor& b, const std::string& name = "minimum");
/// a == b, bool.
te::Tensor equal(const te::Tensor& a, const te::Tensor& b, const std::string& name = "equal");
/// a < b, bool.
te::Tensor less(const te::Tensor& a, const te::Tensor& b, const std::string& name = "less");
/// a > b, bool.
te::Tensor greater(const te::Tensor& a, const te::Tensor& b, const std::string& name = "greater");
/// cond ? a : b with numpy broadcasting of all three; cond is bool.
te::Tensor where(const te::Tensor& cond, const te::Tensor& a, const te::Tensor& b,
                 const std::string& name = "where");
/// Conversion to dtype (float -> int truncates toward zero; to bool: x != 0).
te::Tensor cast(const te::Tensor& x, te::DataType dtype, const std::string& name = "cast");

}  // namespace tuner::ops
