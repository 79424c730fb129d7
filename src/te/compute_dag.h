// A ComputeDAG: the ops that compute some output tensors from input placeholders, in
// topological order. Its structural hash identifies a workload.
#pragma once

#include <string>
#include <vector>

#include "te/tensor.h"

namespace tuner::te {

class ComputeDAG {
 public:
  ComputeDAG() = default;
  /// inputs: the placeholders, in kernel-argument order; outputs: the computed results.
  ComputeDAG(std::vector<Tensor> inputs, std::vector<Tensor> outputs);

  const std::vector<Tensor>& inputs() const { return inputs_; }
  const std::vector<Tensor>& outputs() const { return outputs_; }
  /// Every op (placeholders included), producers before consumers.
  const std::vector<Tensor>& ops() const { return ops_; }
  /// inputs then outputs: the kernel's arguments in order.
  std::vector<Tensor> args() const;
  bool is_output(const OperationNode* op) const;
  /// Ops that read `t`.
  std::vector<Tensor> consumers(const OperationNode* t) const;

  /// The DAG printed with canonical names: equal for structurally equal DAGs.
  const std::string& canonical_text() const { return canonical_; }
  /// Stable 64-bit structural hash (of the canonical text, shapes and dtypes included).
  uint64_t structural_hash() const { return hash_; }
  /// Hash as 16 hex digits.
  std::string hash_hex() const;
  bool structural_equal(const ComputeDAG& o) const { return canonical_ == o.canonical_; }
  /// Floating-point operations of one evaluation (multiply-add counted as 2).
  double flops() const;
  /// Human-readable listing of the ops.
  std::string str() const;

 private:
  std::vector<Tensor> inputs_, outputs_, ops_;
  std::string canonical_;
  uint64_t hash_ = 0;
};

}  // namespace tuner::te
