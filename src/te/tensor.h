// Tensor expressions: placeholders and compute ops (the te DSL), one output per op.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "te/expr.h"

namespace tuner::te {

/// An operation: a placeholder (an input) or a compute op over named axes.
struct OperationNode {
  std::string name;
  std::vector<int64_t> shape;
  DataType dtype;
  bool is_placeholder = true;
  // Compute ops only:
  std::vector<IterVar> axes;         // one per output dimension
  std::vector<IterVar> reduce_axes;  // those of a top-level Reduce body
  Expr body;                         // the value at `axes`
  std::string tag;                   // "injective", "reduce", "matmul", "conv2d", ...
  std::map<std::string, int64_t> attrs;

  bool is_compute() const { return !is_placeholder; }
  bool is_reduction() const { return !reduce_axes.empty(); }
  /// Tensors read by the body, in order of first read.
  std::vector<Tensor> inputs() const;
  /// Sets the body and remembers the tensors it reads: schedules ask every stage for its
  /// inputs in loops over the stages (a 150-stage LSTM spent its search walking bodies).
  void set_body(Expr b);

 private:
  std::vector<Tensor> inputs_;  // read by inputs_body_
  Expr inputs_body_;            // the body inputs_ was taken from (held: its address stays its own)
};

/// An input tensor of the given shape and type.
Tensor placeholder(std::vector<int64_t> shape, DataType dtype, std::string name);

/// A compute op: fcompute maps the output axis variables to the value there. A top-level
/// reduction (sum/max/min/prod) makes it a reduction op.
Tensor compute(std::vector<int64_t> shape, const std::function<Expr(const std::vector<Var>&)>& f,
               std::string name, std::string tag = "injective",
               std::map<std::string, int64_t> attrs = {});

/// A reduction axis over [0, extent).
IterVar reduce_axis(int64_t extent, std::string name);

Expr sum(Expr source, std::vector<IterVar> axes);
Expr max_reduce(Expr source, std::vector<IterVar> axes);
Expr min_reduce(Expr source, std::vector<IterVar> axes);

/// Number of elements of a shape.
int64_t num_elements(const std::vector<int64_t>& shape);
/// "1x3x224x224" ("scalar" for no dimensions; the first 10 and a count beyond that).
std::string shape_str(const std::vector<int64_t>& shape);

}  // namespace tuner::te
