// Reductions (tag "reduce") and the normalizations built from them: softmax, log_softmax,
// layer_norm. A reduction is always the whole body of its op, so composite ops are several
// ops named <name>_<stage> with the final result named <name>.
#pragma once

#include <string>
#include <vector>

#include "ops/shape.h"
#include "te/tensor.h"

namespace tuner::ops {

/// Reduces `axes` (negative count from the end; empty = all) of x; keepdims leaves size-1
/// dimensions. Mean is <name>_sum then <name> (float only).
te::Tensor reduce(const te::Tensor& x, ReduceOp op, const std::vector<int64_t>& axes,
                  bool keepdims = false, const std::string& name = "reduce");
/// Sum over axes.
te::Tensor reduce_sum(const te::Tensor& x, const std::vector<int64_t>& axes, bool keepdims = false,
                      const std::string& name = "reduce_sum");
/// Mean over axes.
te::Tensor reduce_mean(const te::Tensor& x, const std::vector<int64_t>& axes,
                       bool keepdims = false, const std::string& name = "reduce_mean");
/// Maximum over axes.
te::Tensor reduce_max(const te::Tensor& x, const std::vector<int64_t>& axes, bool keepdims = false,
                      const std::string& name = "reduce_max");
/// Minimum over axes.
te::Tensor reduce_min(const te::Tensor& x, const std::vector<int64_t>& axes, bool keepdims = false,
                      const std::string& name = "reduce_min");

/// exp(x - max) / sum(exp(x - max)) along axis: ops <name>_max, <name>_exp, <name>_sum, <name>.
te::Tensor softmax(const te::Tensor& x, int64_t axis = -1, const std::string& name = "softmax");
/// x - max - log(sum(exp(x - max))) along axis: ops <name>_max, <name>_sum, <name>.
te::Tensor log_softmax(const te::Tensor& x, int64_t axis = -1,
                       const std::string& name = "log_softmax");
/// The mean and variance ops of a layer_norm (shaped without the normalized axes).
struct LayerNormStats {
  te::Tensor mean, var;
};
/// (x - mean) / sqrt(var + epsilon) * gamma + beta over the trailing `axes`; gamma and beta
/// have the normalized shape (beta may be undefined). Ops <name>_mean (of x minus its row's
/// first element), <name>_var, <name>; `stats`, when given, receives the mean
/// (<name>_row_mean) and the variance.
te::Tensor layer_norm(const te::Tensor& x, const te::Tensor& gamma, const te::Tensor& beta,
                      const std::vector<int64_t>& axes = {-1}, double epsilon = 1e-5,
                      const std::string& name = "layer_norm", LayerNormStats* stats = nullptr);
/// x / sqrt(mean(x^2) + epsilon) * gamma over the trailing `axes` (ONNX RMSNormalization);
/// gamma broadcasts to the normalized shape. Ops <name>_ms (the mean square), <name>.
te::Tensor rms_norm(const te::Tensor& x, const te::Tensor& gamma, const std::vector<int64_t>& axes = {-1},
                    double epsilon = 1e-5, const std::string& name = "rms_norm");

}  // namespace tuner::ops
