// Einsum equations: parsed once for the converter (converters_einsum.cc) and for the pass
// that turns matrix-product forms into Transpose and MatMul nodes (lower_einsum).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ops/shape.h"

namespace tuner::graph {

/// An equation bound to its operands' shapes. Labels: a letter is its character code (> 64);
/// the ellipsis's dimensions are 0, 1, ..., right-aligned to the widest ellipsis.
struct EinsumSpec {
  std::vector<std::vector<int>> inputs;  // each operand's label per dimension
  std::vector<int> output;               // as written, or numpy's implicit order
  std::map<int, int64_t> size;           // each label's extent (size-1 ellipsis dims broadcast)
  int ellipsis = 0;                      // the widest ellipsis
  /// Labels the output drops (summed).
  std::vector<int> reduced() const;
};

/// Parses `equation` for operands of `shapes`; `fail` reports a malformed equation or shapes
/// that disagree (it must not return).
EinsumSpec parse_einsum(const std::string& equation, const std::vector<ops::Shape>& shapes,
                        const std::function<void(const std::string&)>& fail);

/// A two-operand einsum that is a batched matrix product: transposing A by `perm_a` gives
/// [extra..., batch..., m, k], B by `perm_b` [extra..., batch..., k, n] (extra dimensions on
/// one side only), and the product [extra..., batch..., m, n] by `perm_out` the output.
/// Identity perms need no transpose.
struct EinsumMatmul {
  std::vector<int64_t> perm_a, perm_b, perm_out;
};

/// The matrix-product form of `s`, or nullopt: one summed label, labels in both operands and
/// the output as batch dimensions, and row labels (A and output) and column labels (B and
/// output) of which one side may have several (bij,jk->bik): all but the last become extra
/// batch dimensions of that operand, which MatMul broadcasts.
std::optional<EinsumMatmul> einsum_as_matmul(const EinsumSpec& s);

}  // namespace tuner::graph
