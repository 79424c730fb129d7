// Winograd convolution F(4x4, 3x3) (Lavin & Gray): a 3x3 stride-1 conv computed per 4x4
// output tile as A^T [ (G g G^T) ⊙ (B^T d B) ] A. Summed over input channels, the 36
// products of a tile are 36 independent matrix products U[e] (K x C) x V[e] (C x tiles),
// 4x fewer multiply-adds than the direct conv; the transforms are cheap per tile.
//
// Three stages, so the products are a batched matmul (its schedules and tuning apply):
//   winograd_input:    data [N, C, H, W]   -> V [36, C, P]  (vectors over a row of tiles)
//   winograd_product:  V^T x U [36, C, K]  -> M [36, P, K]  (vectors over output channels)
//   winograd_output:   M (+ bias)          -> out [N, K, OH, OW]
// winograd_conv is the three as one DAG (one kernel: its fallback keeps a block of tiles' V
// and M in cache); the single transforms are ops of their own for timing and checks.
// P = N x tiles_h x row, a row of tiles padded to a power of two (whole vectors; the padded
// tiles are computed and never read). U is the weight transformed once at compile time.
#pragma once

#include <array>
#include <string>

#include "ops/host_tensor.h"
#include "te/tensor.h"

namespace tuner::ops {

/// Output tile (m) and input tile (alpha = m + 2) of F(4x4, 3x3).
constexpr int64_t kWinogradTile = 4;
constexpr int64_t kWinogradAlpha = 6;

/// Tile geometry of a 3x3 stride-1 conv over [N, C, H, W] with the given padding.
struct WinogradGeometry {
  int64_t n = 0, c = 0, h = 0, w = 0;
  int64_t pad_top = 0, pad_left = 0;
  int64_t out_h = 0, out_w = 0;
  int64_t tiles_h = 0, tiles_w = 0;
  int64_t row = 0;    ///< tiles_w rounded up to a power of two (at most a multiple of 16)
  int64_t tiles = 0;  ///< P = n x tiles_h x row

  /// From the input shape and padding (top, left, bottom, right).
  static WinogradGeometry make(const std::vector<int64_t>& nchw, std::array<int64_t, 4> pads);
};

/// V[e, c, p]: B^T d B of input tile p (zero-padded input).
te::Tensor winograd_input(const te::Tensor& data, const WinogradGeometry& g,
                          const std::string& name = "winograd_input");
/// M[e, p, k] = sum_c V[e, c, p] U[e, c, k] (tag matmul: tiled like one).
te::Tensor winograd_product(const te::Tensor& v, const te::Tensor& u,
                            const std::string& name = "winograd_product");
/// out[n, k, h, w] = A^T M A of tile (n, h/4, w/4) at (h%4, w%4), plus bias[k] if given.
te::Tensor winograd_output(const te::Tensor& m, const WinogradGeometry& g, const te::Tensor& bias = {},
                           const std::string& name = "winograd_output");
/// The three stages in one: out = winograd_output(winograd_product(winograd_input(data), u)).
/// One kernel, so a schedule can keep a row of tiles' V and M in cache (schedule/fallback.cc).
te::Tensor winograd_conv(const te::Tensor& data, const te::Tensor& u, const WinogradGeometry& g,
                         const te::Tensor& bias = {}, const std::string& name = "winograd_conv");
/// U[e, c, k] = G g G^T of a 3x3 weight [K, C, 3, 3] (float32), computed in double.
HostTensor winograd_weight(const HostTensor& kcrs);

/// Reference transforms on host tensors (tests and the op registry's checks).
HostTensor winograd_input_ref(const HostTensor& data, const WinogradGeometry& g);
HostTensor winograd_product_ref(const HostTensor& v, const HostTensor& u);
HostTensor winograd_output_ref(const HostTensor& m, const WinogradGeometry& g,
                               const HostTensor& bias = {});

}  // namespace tuner::ops
