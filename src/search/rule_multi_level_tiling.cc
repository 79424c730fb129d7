#include <optional>

#include "schedule/analysis.h"
#include "schedule/fallback.h"
#include "search/rules.h"

namespace tuner::search {

using schedule::Schedule;

TilingStages tiling_stages(Schedule& s, const std::string& stage) {
  std::string outer = schedule::epilogue_of(s.state(), stage);
  if (!outer.empty()) return {outer, stage};
  return {stage, s.cache_write(stage)};
}

void rule_multi_level_tiling(Schedule& s, const std::string& stage, const SpaceOptions& o) {
  auto [outer, local] = tiling_stages(s, stage);
  te::Tensor op_ref = s.state().stage(local).op;  // owned: primitives replace the state
  const auto& op = *op_ref;
  int nsp = int(op.axes.size()), nred = int(op.reduce_axes.size());
  // The spatial axes as loop ids of each stage (the reductions follow them in `local`).
  std::vector<int> lax(nsp), oax;
  for (int a = 0; a < nsp; ++a) lax[a] = a;
  oax = lax;
  // The fallback's tile (SpaceOptions::like_fallback): the choices below take it.
  std::optional<schedule::ReductionTile> fb;
  if (o.like_fallback)
    fb = schedule::fallback_tile(op, *s.state().stage(outer).op, o.vector_lanes, o.vector_registers,
                                 schedule::read_in_place(s.state(), outer, stage));
  bool spans_row = fb && fb->col_span > fb->cols;  // a depthwise tile over the whole row
  // A packed 1x1 conv over a small plane: the fallback's tile is channel blocks (S3) over
  // blocks of whole rows (S2), the pixels inside the reduction's outer part (R0).
  schedule::PlaneTile plane;
  if (fb) plane = schedule::pointwise_plane_tile(op, o.vector_registers);
  auto prefer = [&](std::vector<int64_t> decision) {
    if (fb) s.preset_next(std::move(decision));
  };
  // Sampled: a plain 1x1 conv may tile its pixels as one axis (rows joined), so its vectors
  // need not divide a row: 56-wide rows fill 16-lane vectors.
  bool fuse_pixels = schedule::pixels_are_one_axis(op);
  if (fuse_pixels) prefer({0});
  if (fuse_pixels && s.categorical_value(s.sample_categorical({0, 1})) == 1) {
    lax = {0, 1, s.fuse(local, {2, 3})};
    oax = {0, 1, s.fuse(outer, {2, 3})};
    nsp = 3;
  }
  // The vectorized axis: the innermost, or the output channels of a conv over a packed
  // weight (a contiguous weight vector, the input broadcast). It is the last loop of S3.
  int vec = op.attrs.count("weight_block") ? 1 : nsp - 1;
  // S0 (the parallel loop) of a conv whose threads split rows: [n, oh, k, ow].
  bool rows_first = schedule::split_rows_among_threads(op);
  auto level_order = [&](int level) {
    std::vector<int> axes;
    for (int a = 0; a < nsp; ++a)
      if (level < 3 || a != vec) axes.push_back(a);
    if (level == 3) axes.push_back(vec);
    if (level == 0 && rows_first) std::swap(axes[1], axes[2]);
    return axes;
  };
  // Four levels per spatial axis, two per reduction axis (SSRSRS).
  std::vector<int> sp_tiles, red_tiles;
  for (int a = 0; a < nsp; ++a) {
    int64_t ext = s.state().stage(local).iters[size_t(lax[a])].extent;
    // Sampled for a vectorized axis wider than a vector but not a multiple of one, or (a
    // plain conv's row) an odd number of vectors: whole vectors and a partial last block
    // (56 = 4 x 16, the last 8 wide; partition_tails vectorizes both), or factors of the
    // extent itself (8 lanes for 56).
    int64_t padded = a == vec ? schedule::partial_vector_extent(ext, o.vector_lanes) : 0;
    if (a == vec && !padded)
      padded = schedule::two_vector_row_extent(op, ext, o.vector_lanes, o.vector_registers);
    if (padded) {
      if (fb) prefer({ext % fb->cols != 0 ? 1 : 0});  // the fallback's block is partial
      if (s.categorical_value(s.sample_categorical({0, 1})) == 0) padded = 0;
    }
    if (fb) {
      // The fallback's loops: the tile's rows and columns innermost (S3); the rest outside
      // the tile, in the parallel loop (S0) but for the last axis's (unless too few tiles
      // are left for the threads) and the thread-split rows' blocks, which run serially
      // around the tile (S1).
      int64_t text = padded ? padded : ext;
      int64_t inner = a == fb->row_axis ? fb->rows : a == fb->col_axis ? fb->cols : a == 2 ? fb->out_rows : 1;
      // A row-spanning tile sweeps its blocks inside the register tile's stage (S2), around
      // the taps (R1 below).
      if (plane.channel_blocks) {
        int64_t in = a == 1 ? plane.channel_blocks * op.attrs.at("weight_block") : 1;
        if (a == 2) prefer({text / plane.row_block, 1, plane.row_block, 1});
        else if (a == 3) prefer({1, 1, text, 1});
        else prefer({text / in, 1, 1, in});
      } else if (fb->row_block && a == 2) prefer({text / fb->row_block, fb->row_block / inner, 1, inner});
      else if (a == fb->col_axis && spans_row) prefer({1, 1, text / inner, inner});
      else if (a == nsp - 1 && !fb->last_parallel) prefer({1, text / inner, 1, inner});
      else prefer({text / inner, 1, 1, inner});
    }
    sp_tiles.push_back(s.sample_perfect_tile(local, lax[a], 4,
                                             a == vec ? o.max_innermost_factor : 16, padded));
  }
  int red0 = int(op.axes.size());
  for (int r = 0; r < nred; ++r) {
    // The fallback keeps the reductions outside the tile, the first (matmul's k) with a few
    // iterations unrolled around it.
    int64_t ext = op.reduce_axes[size_t(r)].extent;
    int64_t ku = r == 0 && fb ? fb->k_unroll : 1;
    if (spans_row) ku = ext;  // the taps in R1
    if (r == 0 && plane.channel_blocks) ku = plane.reduce_inner;
    prefer({ext / ku, ku});
    red_tiles.push_back(s.sample_perfect_tile(local, red0 + r, 2, 64));
  }

  // A packed conv's tile holds output channels in its vectors, which the output stores a
  // channel stride apart, lane by lane; the writing stage may instead vectorize the output
  // rows (contiguous) and unroll the channels, reading the tile across its vectors (in
  // registers once unrolled). Sampled: which wins depends on the tile's width.
  if (vec != nsp - 1 && fb) prefer({schedule::transposed_epilogue(*fb) || plane.channel_blocks ? 1 : 0});
  bool rows_out = vec != nsp - 1 && s.categorical_value(s.sample_categorical({0, 1})) == 1;
  // Then an epilogue with a transcendental is computed in the tile's layout first, as the
  // fallback does (transposed, SiLU's sigmoid ran on vectors of the tile's few pixels).
  std::string epi = rows_out && !fuse_pixels && schedule::computes_transcendental(s.state(), outer)
                        ? s.cache_write(outer)
                        : "";

  // The writing stage: S0 S1 S2 S3, S0 fused and parallel, innermost vectorized.
  std::vector<std::vector<int>> w(nsp);
  for (int a = 0; a < nsp; ++a) w[a] = s.split_sampled(outer, oax[a], sp_tiles[a]);
  std::vector<int> order, s0;
  // A depthwise rows tile stores its output row by row (the fallback's order): its column
  // blocks (S2 of the vectorized axis) go inside the other axes' S3.
  bool rows_then_blocks = schedule::depthwise_row_tile(op, o.vector_registers);
  for (int level = 0; level < 4; ++level)
    for (int a : level_order(level)) {
      if (rows_then_blocks && a == vec && level == 2) continue;  // placed with S3 below
      if (rows_then_blocks && a == vec && level == 3) order.push_back(w[a][2]);
      order.push_back(w[a][level]);
    }
  if (rows_out) std::swap(order[order.size() - 1], order[order.size() - 2]);
  for (int a : level_order(0)) s0.push_back(w[a][0]);
  s.reorder(outer, order);
  int par = nsp > 1 ? s.fuse(outer, s0) : s0[0];
  s.parallel(outer, par);
  if (rows_out) {
    s.unroll(outer, w[vec][3]);
    s.vectorize(outer, w[nsp - 1][3]);
  } else {
    s.vectorize(outer, w[vec][3]);
  }
  if (!epi.empty()) schedule::place_epilogue_in_tile_layout(s, epi, outer, w[nsp - 1][1], local, vec);
  else s.compute_at(local, outer, w[nsp - 1][1]);

  // The register tile: S0 S1 R0 S2 R1 S3 (S0 and S1 have extent 1 inside the tile).
  std::vector<std::vector<int>> l(nsp), r(nred);
  for (int a = 0; a < nsp; ++a) l[a] = s.split_sampled(local, lax[a], sp_tiles[a]);
  for (int k = 0; k < nred; ++k) r[k] = s.split_sampled(local, red0 + k, red_tiles[k]);
  std::vector<int> lorder;
  auto spatial = [&](int level) {
    for (int a : level_order(level)) lorder.push_back(l[a][level]);
  };
  auto reduce = [&](int level) {
    for (int k = 0; k < nred; ++k) lorder.push_back(r[k][level]);
  };
  spatial(0);
  spatial(1);
  reduce(0);
  spatial(2);
  reduce(1);
  spatial(3);
  s.reorder(local, lorder);
  s.vectorize(local, l[vec][3]);
  // The register tile: unroll its rows (innermost level of the other spatial axes, at most
  // 16 each) so the accumulators live in registers whatever the auto-unroll step.
  for (int a = 0; a < nsp; ++a)
    if (a != vec) s.unroll(local, l[a][3]);
  // Sampled for a depthwise conv: its taps unrolled too (adjacent tile rows then share loads).
  if (schedule::is_depthwise(op)) {
    if (fb) prefer({fb->unroll_taps ? 1 : 0});
    if (s.categorical_value(s.sample_categorical({0, 1})) == 1)
      for (auto& levels : r)
        for (int loop : levels) s.unroll(local, loop);
  }
  prefer({0});  // the fallback unrolls only the tile's rows (and a depthwise conv's taps)
  s.auto_unroll_sampled(local, s.sample_categorical(o.unroll_steps, o.unroll_probs));
}

}  // namespace tuner::search
