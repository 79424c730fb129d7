// Small te helpers shared by the operator definitions (internal to src/ops).
#pragma once

#include <string>
#include <vector>

#include "ops/shape.h"
#include "support/error.h"
#include "te/tensor.h"

namespace tuner::ops::detail {

/// Index expressions reading a tensor of `in_shape` broadcast (numpy, right-aligned) to an
/// output indexed by `out`: size-1 input dimensions read index 0.
inline std::vector<te::Expr> broadcast_index(const std::vector<te::Expr>& out,
                                             const Shape& in_shape) {
  std::vector<te::Expr> idx;
  size_t off = out.size() - in_shape.size();
  for (size_t d = 0; d < in_shape.size(); ++d)
    idx.push_back(in_shape[d] == 1 ? te::Expr(0) : out[off + d]);
  return idx;
}

/// Vars as Exprs.
inline std::vector<te::Expr> exprs(const std::vector<te::Var>& v) {
  return std::vector<te::Expr>(v.begin(), v.end());
}

/// The index `o` with dimension `axis` replaced by `e` (a read along that axis).
inline std::vector<te::Expr> with_axis(const std::vector<te::Var>& o, size_t axis, te::Expr e) {
  std::vector<te::Expr> idx = exprs(o);
  idx[axis] = std::move(e);
  return idx;
}

/// e * s, leaving e alone when s == 1 (keeps the IR of common cases minimal).
inline te::Expr scaled(const te::Expr& e, int64_t s) { return s == 1 ? e : e * te::Expr(s); }

/// An index read from data as an in-range int64 along a dimension of `dim` elements:
/// negative values count from the end, others out of range are clamped (never a wild read).
inline te::Expr wrap_index(te::Expr i, int64_t dim) {
  i = te::cast(te::DataType::i64(), std::move(i));
  i = te::select(i < te::Expr(0), i + te::Expr(dim), i);
  return te::min(te::max(i, te::Expr(0)), te::Expr(dim - 1));
}

/// Conjunction of conditions; undefined when the list is empty (no check needed).
inline te::Expr all_of(const std::vector<te::Expr>& conds) {
  te::Expr c;
  for (auto& x : conds) c = c ? te::logical_and(c, x) : x;
  return c;
}

/// Requires a floating-point tensor.
inline void check_float(const te::Tensor& t, const std::string& op) {
  USER_CHECK(t.dtype().is_float()) << op << ": needs a floating-point input, got "
                                   << t.dtype().str() << " tensor " << t.name();
}

/// Requires a numeric (non-bool) tensor.
inline void check_numeric(const te::Tensor& t, const std::string& op) {
  USER_CHECK(!t.dtype().is_bool()) << op << ": needs a numeric input, got bool tensor "
                                   << t.name();
}

/// Requires equal dtypes.
inline void check_same_dtype(const te::Tensor& a, const te::Tensor& b, const std::string& op) {
  USER_CHECK(a.dtype() == b.dtype()) << op << ": operand dtypes differ: " << a.dtype().str()
                                     << " (" << a.name() << ") vs " << b.dtype().str() << " ("
                                     << b.name() << ")";
}

}  // namespace tuner::ops::detail
