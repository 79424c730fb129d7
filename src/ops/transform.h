// Data-movement operators: transpose, reshape, concat, pad, slice, gather, expand, tile,
// resize. All are "injective" except pad (tag "pad") and a separable resize's passes before
// its last (tag "resize_pass": computed once, not inlined).
#pragma once

#include <string>
#include <vector>

#include "ops/shape.h"
#include "te/tensor.h"

namespace tuner::ops {

/// out[i_0, ..., i_n] = x[...] with out dimension d = x dimension perm[d].
te::Tensor transpose(const te::Tensor& x, const std::vector<int64_t>& perm,
                     const std::string& name = "transpose");
/// Same elements in row-major order under a new shape (one -1 is inferred).
te::Tensor reshape(const te::Tensor& x, const std::vector<int64_t>& to,
                   const std::string& name = "reshape");
/// Concatenation along `axis` (negative counts from the end).
te::Tensor concat(const std::vector<te::Tensor>& inputs, int64_t axis,
                  const std::string& name = "concat");
/// x padded with `value` (pads as for `pad`) read at indices `idx` of the padded tensor, where
/// idx[d] takes values up to idx_max[d]: `value` outside x, the border tested only where
/// reached.
te::Expr padded_read(const te::Tensor& x, const std::vector<int64_t>& pads,
                     const std::vector<te::Expr>& idx, const std::vector<int64_t>& idx_max,
                     double value);
/// padded_read with the value as an expression of x's dtype (an exact int64).
te::Expr padded_read(const te::Tensor& x, const std::vector<int64_t>& pads,
                     const std::vector<te::Expr>& idx, const std::vector<int64_t>& idx_max,
                     const te::Expr& value);

/// Constant padding; pads = [begin_0, ..., begin_{n-1}, end_0, ..., end_{n-1}] (ONNX order).
te::Tensor pad(const te::Tensor& x, const std::vector<int64_t>& pads, double value = 0.0,
               const std::string& name = "pad");
/// pad with the value as an expression of x's dtype (an exact int64).
te::Tensor pad_with(const te::Tensor& x, const std::vector<int64_t>& pads, const te::Expr& value,
                    const std::string& name);
/// ONNX Slice: starts/ends per axis in `axes` (empty = leading axes), steps may be negative.
te::Tensor slice(const te::Tensor& x, const std::vector<int64_t>& starts,
                 const std::vector<int64_t>& ends, const std::vector<int64_t>& axes = {},
                 const std::vector<int64_t>& steps = {}, const std::string& name = "slice");
/// ONNX Gather: picks data entries along `axis` by integer indices (negative indices wrap;
/// out-of-range indices are clamped, where ONNX leaves them undefined).
te::Tensor gather(const te::Tensor& data, const te::Tensor& indices, int64_t axis = 0,
                  const std::string& name = "gather");
/// ONNX Expand: x broadcast (numpy rules, both ways) with `shape`.
te::Tensor expand(const te::Tensor& x, const std::vector<int64_t>& shape,
                  const std::string& name = "expand");
/// ONNX Tile: x repeated repeats[d] times along each dimension d.
te::Tensor tile(const te::Tensor& x, const std::vector<int64_t>& repeats,
                const std::string& name = "tile");
/// ONNX Resize (nearest or linear, any axes) of float x to shape `out`.
te::Tensor resize(const te::Tensor& x, const Shape& out, const ResizeAttrs& attrs,
                  const std::string& name = "resize");

}  // namespace tuner::ops
