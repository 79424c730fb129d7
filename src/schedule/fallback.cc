// The hand-written default schedule, so an empty database still compiles correct, reasonable
// code. Injective stages are inlined into their readers (except the operands of matmul/conv,
// which are computed once, and padding, which only small conv windows read inlined). Matmul
// and conv2d get a register-tiled schedule: the reduction is computed into a small local tile
// (vector accumulators) at the innermost outer loop of the stage that writes the result,
// which also applies the elementwise epilogue.
// Everything else: outer loops fused and parallel, the innermost loop vectorized when a
// divisor of its extent fills a vector.
#include "schedule/fallback.h"

#include "schedule/analysis.h"
#include "schedule/winograd_schedule.h"
#include "te/functor.h"

#include <algorithm>
#include <set>

#include "support/error.h"

namespace tuner::schedule {

int64_t largest_divisor_leq(int64_t n, int64_t cap) {
  for (int64_t d = std::min(n, cap); d > 1; --d)
    if (n % d == 0) return d;
  return 1;
}

namespace {

// Fewer tiles than this in the parallel loop leave threads idle.
constexpr int64_t kMinParallelTiles = 8;
// With this many the threads' shares differ little (21 tiles on 2 threads are 11 against 10:
// a 96 -> 24 1x1 conv at 56x56 in 8-row blocks, 0.29 ms; in 4-row blocks, 42 tiles, 0.275).
constexpr int64_t kBalancedTiles = 32;
// An injective stage this small runs in well under a microsecond: handing it to the threads
// costs more (an unrolled LSTM's gate stages, 256 elements each: 50 steps 1.92 -> 1.87 ms).
constexpr int64_t kMinParallelElements = 2048;
// A full reduction of at least this many elements is computed as partial results
// (split_full_reduction).
constexpr int64_t kMinSplitReduction = 8192;

class Fallback {
 public:
  Fallback(Schedule& s, const FallbackOptions& o) : s_(s), o_(o) {}

  void run() {
    inline_injective();
    inline_small_window_padding();
    // Stages are handled consumers first, so tiled reductions see their epilogue untouched.
    std::vector<std::string> names;
    for (auto& st : s_.state().stages()) names.push_back(st.name());
    // The epilogue of a tiled reduction is scheduled together with it.
    claimed_ = tiled_epilogues(s_.state(), [&](const Stage& st) { return tiled(st); });
    for (auto it = names.rbegin(); it != names.rend(); ++it) {
      if (claimed_.count(*it)) continue;
      if (done_.count(*it) || !s_.state().has_stage(*it)) continue;
      const Stage& st = s_.state().stage(*it);
      if (st.loc != Location::Root) continue;
      if (tiled(st)) tile_reduction(*it);
      else if (!st.op->reduce_axes.empty()) schedule_reduction(*it);
      else schedule_injective(*it);
    }
  }

 private:
  bool tiled(const Stage& st) const { return tiled_on_cpu(s_.state(), st, o_.vector_lanes); }

  void inline_injective() {
    for (auto& st : std::vector<Stage>(s_.state().stages()))
      if (should_auto_inline(s_.state(), st.name())) s_.compute_inline(st.name());
  }

  // Padding read by a conv is inlined into it: the border test on its loads costs less than
  // a pass writing the whole padded input (measured 1.3-10x faster on ResNet-18 and
  // MobileNet-V2 layers). A window above 3x3 keeps the pass unless the conv is packed: its
  // masked strided vector loads made the 7x7 stem 1.7x slower, where a packed conv's
  // broadcast input is one load from a selected address (resnet18's stem in the model
  // 0.60-0.64 -> 0.565 ms, AVX-512). With 16 registers a packed conv keeps the pass: each
  // broadcast feeds half the lanes, and the selected addresses cost as much as the
  // multiply-adds (AMD Zen 3: 256->256 3x3 at 14x14 1.88 -> 1.64 ms, the 7x7 stem 2.62 ->
  // 1.69, 256->512 stride 2 1.66 -> 1.14).
  void inline_small_window_padding() {
    for (auto& pad : std::vector<Stage>(s_.state().stages())) {
      int loc = fallback_padding_location(s_.state(), pad.name(), o_.vector_registers);
      if (loc == kPadInline) s_.compute_inline(pad.name());
      else if (loc == kPadPerTile) padded_per_tile_.insert(pad.name());
    }
  }

  // Padding filled per tile goes at the start of the loops of its reader's local stage.
  void attach_tile_padding(const std::string& local) {
    for (const std::string& pad : padded_per_tile_) {
      if (done_.count(pad) || !s_.state().has_stage(pad)) continue;
      auto cons = s_.state().consumers(pad);
      if (cons.size() != 1 || cons[0] != local) continue;
      s_.compute_at(pad, local, s_.state().stage(local).leaves[0]);
      fill_parities_together(s_, pad);
      done_.insert(pad);
    }
  }

  // The stage writing a tiled reduction's result (its epilogue, or the reduction itself) and
  // the one accumulating it (the reduction, or a cache_write of it).
  std::pair<std::string, std::string> tile_stages(const std::string& name) {
    std::string outer = epilogue_of(s_.state(), name), local = name;
    if (outer.empty()) {
      local = s_.cache_write(name);
      outer = name;
    }
    done_.insert(outer);
    done_.insert(local);
    return {outer, local};
  }

  // A packed 1x1 conv over a small output plane: its tile is a few channel blocks over a
  // block of whole rows, the accumulators in L1 rather than registers. The reduction's outer
  // loop sweeps the tile's pixels, each reading a few input channels along the plane's
  // contiguous rows, the weights of those channels reused from L1.
  bool tile_pointwise_plane(const std::string& name) {
    const te::Tensor rop = s_.state().stage(name).op;
    PlaneTile p = pointwise_plane_tile(*rop, o_.vector_registers);
    if (!p.channel_blocks) return false;
    auto [outer, local] = tile_stages(name);
    int64_t wblock = rop->attrs.at("weight_block");
    // Outer [n, k, oh, ow] -> [n, k.o, oh.o | oh.i, k.b, k.l, ow]: pixels as vectors along the
    // contiguous rows, the channels unrolled.
    auto k = s_.split(outer, 1, {p.channel_blocks, wblock});
    auto h = s_.split(outer, 2, {p.row_block});
    s_.reorder(outer, {0, k[0], h[0], h[1], k[1], k[2], 3});
    int f = s_.fuse(outer, {0, k[0], h[0]});
    s_.parallel(outer, f);
    s_.unroll(outer, k[2]);
    s_.vectorize(outer, 3);
    s_.compute_at(local, outer, f);
    // Local [n, k, oh, ow, rc, rh, rw] -> [n, rc.o, rh, rw, oh, ow, rc.i, k.b, k.l].
    auto lk = s_.split(local, 1, {wblock});
    auto rc = s_.split(local, 4, {p.reduce_inner});
    s_.reorder(local, {0, rc[0], 5, 6, 2, 3, rc[1], lk[0], lk[1]});
    s_.unroll(local, rc[1]);
    s_.unroll(local, lk[0]);
    s_.vectorize(local, lk[1]);
    return true;
  }

  void tile_reduction(const std::string& name) {
    if (tile_pointwise_plane(name)) return;
    const te::Tensor rop = s_.state().stage(name).op;
    bool conv = rop->tag == "conv2d" || rop->tag == "pool";
    auto [outer, local] = tile_stages(name);
    te::Tensor wop = s_.state().stage(outer).op;
    int nax = int(wop->axes.size());
    ReductionTile t = fallback_tile(*rop, *wop, o_.vector_lanes, o_.vector_registers,
                                    read_in_place(s_.state(), outer, local));
    int row_axis = t.row_axis, col_axis = t.col_axis;
    int64_t tr = t.rows, tc = t.cols;

    // An epilogue with a transcendental (SiLU's sigmoid) is computed first in the tile's own
    // layout, on whole channel vectors, and only copied out transposed: transposed, it ran on
    // vectors of the tile's rows (8 or 7 pixels, half a register), 2x the time per element.
    // efficientnet_b0's 3x3 stem + SiLU alone 0.290 -> 0.213 ms (ORT 0.234); the model 1.29x
    // -> 1.16x ORT.
    std::string epi = transposed_epilogue(t) && t.col_span <= tc &&
                              computes_transcendental(s_.state(), outer)
                          ? s_.cache_write(outer)
                          : "";
    if (!epi.empty()) done_.insert(epi);

    // Outer stage: [batch.., rows.o, (oh), cols.o, rows.i, cols.i] (packed conv: [n, k.o,
    // oh, ow.o, ow.i, k.i])
    auto r = s_.split(outer, row_axis, {tr});
    // A row-spanning tile: [cols.o (extent 1), blocks, cols.i], the blocks around the rows.
    bool span = t.col_span > tc;
    auto c = span ? s_.split(outer, col_axis, {(t.col_span + tc - 1) / tc, tc}) : s_.split(outer, col_axis, {tc});
    std::vector<int> order, fused;
    for (int a = 0; a < nax; ++a) {
      if (a == row_axis) order.push_back(r[0]);
      else if (a == col_axis) order.push_back(c[0]);
      else order.push_back(a);
    }
    // The tile's output rows (out_rows > 1): oh.i, inside the loops around the tile.
    int tile_rows = -1;
    auto split_tile_rows = [&](int loop) {
      if (t.out_rows == 1) return loop;
      auto h = s_.split(outer, loop, {t.out_rows});
      tile_rows = h[1];
      return h[0];
    };
    if (t.row_block) {
      // Rows split among threads: [n, oh.o, (channels).o, oh.i, last], the first three parallel.
      int channels_o = order[1], last = order[3];
      auto h = s_.split(outer, 2, {t.row_block});
      order = {0, h[0], channels_o, split_tile_rows(h[1]), last};
      fused = {0, h[0], channels_o};
    } else {
      if (t.out_rows > 1) order[2] = split_tile_rows(2);
      // A packed B's panels outside the row tiles: a thread's row tiles then reuse one panel
      // (k x 32 floats, in L2) instead of sweeping all of B (megabytes, from L3 or memory) for
      // every row tile. Intel Rocket Lake: 197x768 x 768x3072 4.2 -> 2.6 ms, bert's 128x768 x
      // 768x3072 2.9 -> 1.6, 1024^3 9.0 -> 5.9.
      auto bb = rop->attrs.find("b_block");
      // Only with panels enough for the threads (the parallel loop is then theirs alone).
      if (bb != rop->attrs.end() && bb->second > 0 && row_axis == nax - 2 && col_axis == nax - 1 &&
          wop->shape[size_t(row_axis)] > tr && wop->shape[size_t(col_axis)] / tc >= kMinParallelTiles)
        std::swap(order[size_t(nax - 2)], order[size_t(nax - 1)]);
      fused.assign(order.begin(), order.end() - 1);  // all but the last outer loop
      if (t.last_parallel) fused.push_back(order.back());
    }
    int attach = order.back();
    if (tile_rows >= 0) order.push_back(tile_rows);
    // A packed conv's tile holds channel vectors, but its output rows are contiguous along
    // the width: the epilogue sweeps the tile's pixels as vectors with its channels unrolled,
    // so LLVM transposes the tile in registers (shuffles) instead of storing each lane on its
    // own (one extract per lane). mobilenet_v2's 3x3 stem 0.100 -> 0.061 ms, its 1x1
    // 24 -> 144 at 56x56 0.116 -> 0.069, resnet18's 7x7 stem 0.60 -> 0.54.
    bool transpose = transposed_epilogue(t);
    int vec = transpose ? r[1] : c.back(), inner_outer = transpose ? c[1] : r[1];
    order.push_back(inner_outer);
    // A row-spanning tile stores row by row, its blocks inside: the epilogue's stores then
    // run through the tile's output in order (block by block they hopped between the rows'
    // lines). mobilenet_v2 on AMD Zen 1: 32x112x112 depthwise 0.305 -> 0.25 ms.
    if (span) order.push_back(c[1]);
    order.push_back(vec);
    s_.reorder(outer, order);
    int f = fused.size() > 1 ? s_.fuse(outer, fused) : fused[0];
    if (fused.back() == attach) attach = f;
    s_.parallel(outer, f);
    if (transpose) s_.unroll(outer, inner_outer);
    if (tile_rows >= 0) s_.unroll(outer, tile_rows);
    s_.vectorize(outer, vec);
    if (!epi.empty()) place_epilogue_in_tile_layout(s_, epi, outer, attach, local, col_axis);
    else s_.compute_at(local, outer, attach);

    // Local stage: [spatial outers (extent 1 after bound inference), reduce..., rows.i, cols.i]
    // Copy what is needed: primitives replace the state, so a Stage& would dangle.
    te::Tensor lop = s_.state().stage(local).op;
    int lax = int(lop->axes.size()), nred = int(lop->reduce_axes.size());
    auto lr = s_.split(local, row_axis, {tr});
    auto lc = s_.split(local, col_axis, {tc});
    std::vector<int> lh = t.out_rows > 1 ? s_.split(local, 2, {t.out_rows}) : std::vector<int>{2};
    std::vector<int> lorder;
    for (int a = 0; a < lax; ++a) {
      if (a == row_axis) lorder.push_back(lr[0]);
      else if (a == col_axis) lorder.push_back(lc[0]);
      else if (a == 2) lorder.push_back(lh[0]);
      else lorder.push_back(a);
    }
    std::vector<int> reds;
    for (int k = 0; k < nred; ++k) reds.push_back(lax + k);
    int unroll_k = -1;
    if (!conv) {
      // Split k so a few iterations are unrolled around the register tile.
      int64_t ku = t.k_unroll;
      if (ku > 1) {
        auto ks = s_.split(local, lax, {ku});
        reds = {ks[0], ks[1]};
        unroll_k = ks[1];
      }
    }
    lorder.insert(lorder.end(), reds.begin(), reds.end());
    if (t.out_rows > 1) lorder.push_back(lh[1]);
    lorder.push_back(lr[1]);
    lorder.push_back(lc[1]);
    s_.reorder(local, lorder);
    if (t.out_rows > 1) s_.unroll(local, lh[1]);
    s_.unroll(local, lr[1]);
    if (unroll_k >= 0) s_.unroll(local, unroll_k);
    if (t.unroll_taps)
      for (int k : reds) s_.unroll(local, k);
    s_.vectorize(local, lc[1]);
    attach_tile_padding(local);
  }

  // Reductions other than matmul/conv: parallel over the fused spatial loops. A long
  // innermost reduction (softmax, layer norm over a row) is vectorized through rfactor.
  void schedule_reduction(const std::string& name) {
    done_.insert(name);
    if (int width = row_reduction_vector_width(s_.state(), name, o_.vector_lanes)) {
      vectorize_row_reduction(s_, name, width);
      done_.insert(name + ".rf");
      return;
    }
    if (split_full_reduction(s_, name, o_.vector_lanes)) {
      done_.insert(name + ".rf");
      return;
    }
    const Stage& st = s_.state().stage(name);
    int nax = int(st.op->axes.size());
    if (nax == 0) return;
    std::vector<int> sp;
    for (int a = 0; a < nax; ++a) sp.push_back(a);
    int f = nax > 1 ? s_.fuse(name, sp) : 0;
    if (s_.state().stage(name).iters[f].extent >= 2) s_.parallel(name, f);
  }

  // Winograd transforms (ops/winograd.h) pick one formula per tile element: those loops are
  // unrolled, so each formula is selected at compile time and the partial sums shared between
  // formulas are computed once (LLVM's value numbering across the unrolled copies).
  // Input [e, c, p]: [c, p.o] parallel, e unrolled, p.i (a row of tiles) vectorized.
  // Output [n, k, h, w]: [n, k.o, h.o] parallel, w.o serial, h.i and w.i unrolled, k.i
  // vectorized (the products M [e, p, k] are contiguous along k; the stores a plane apart).
  // winograd_conv in one kernel: schedule_winograd_conv (schedule/winograd_schedule.cc).
  bool schedule_winograd(const std::string& name) {
    const te::OperationNode* in = inlined_tag(s_.state(), name, "winograd_input");
    const te::OperationNode* out = in ? nullptr : inlined_tag(s_.state(), name, "winograd_output");
    if (!in && !out) return false;
    if (in) {
      auto p = s_.split(name, 2, {in->attrs.at("row")});
      s_.reorder(name, {1, p[0], 0, p[1]});
      int f = s_.fuse(name, {1, p[0]});
      s_.parallel(name, f);
      s_.unroll(name, 0);
      s_.vectorize(name, p[1]);
      for (auto& t : schedule_winograd_tile_copy(s_, name, f, false)) done_.insert(t);
      return true;
    }
    if (auto w = winograd_conv_stages(s_.state(), name)) {
      auto b = fallback_winograd_block(s_.state(), *w, o_.vector_lanes, o_.vector_registers);
      for (auto& t : schedule_winograd_conv(s_, *w, b, o_.vector_lanes)) done_.insert(t);
      return true;
    }
    int64_t kv = largest_divisor_leq(s_.state().stage(name).op->shape[1], o_.vector_lanes);
    auto k = s_.split(name, 1, {kv});
    auto h = s_.split(name, 2, {4});
    auto w = s_.split(name, 3, {4});
    s_.reorder(name, {0, k[0], h[0], w[0], h[1], w[1], k[1]});
    int f = s_.fuse(name, {0, k[0], h[0]});
    s_.parallel(name, f);
    s_.unroll(name, h[1]);
    s_.unroll(name, w[1]);
    if (kv > 1) s_.vectorize(name, k[1]);
    return true;
  }

  // Injective stages: fuse the outer loops in parallel, vectorize the innermost (or keep it a
  // serial loop, fallback_serial_row).
  void schedule_injective(const std::string& name) {
    done_.insert(name);
    if (schedule_winograd(name)) return;
    const Stage& st = s_.state().stage(name);
    int nax = int(st.op->axes.size());
    if (nax == 0) return;
    int64_t elements = te::num_elements(st.op->shape);
    int64_t v = injective_vector_width(*st.op, o_.vector_lanes);
    std::vector<int> outer;
    for (int a = 0; a + 1 < nax; ++a) outer.push_back(a);
    int inner_vec = -1, inner_outer = -1;
    if (v > 1) {
      auto sp = s_.split(name, nax - 1, {v});
      inner_outer = sp[0];
      inner_vec = sp[1];
      outer.push_back(inner_outer);
    } else if (!fallback_serial_row(*st.op, o_.vector_lanes)) {
      outer.push_back(nax - 1);
    }
    int f = outer.size() > 1 ? s_.fuse(name, outer) : outer[0];
    if (s_.state().stage(name).iters[f].extent >= 2 && elements >= kMinParallelElements)
      s_.parallel(name, f);
    if (inner_vec >= 0) s_.vectorize(name, inner_vec);
  }

  Schedule& s_;
  FallbackOptions o_;
  std::set<std::string> done_, claimed_;
  std::set<std::string> padded_per_tile_;  // padding stages to attach to their reader's tile
};

}  // namespace

int64_t partial_vector_extent(int64_t extent, int lanes) {
  int64_t rest = extent % lanes;
  return extent > lanes && rest != 0 && rest % 4 == 0 ? extent - rest + lanes : 0;
}

int64_t two_vector_row_extent(const te::OperationNode& conv, int64_t extent, int lanes,
                              int registers) {
  // Two vectors per tile, the last block one: each broadcast weight then feeds two
  // multiply-adds. mobilenet_v2's 96 -> 24 1x1 conv at 56x56, 8 channels x 8 pixels -> 6 x
  // 16: 0.35 -> 0.30 ms, its 144 -> 24 0.43 -> 0.38 (AMD Zen 1, a slow period).
  bool plain = conv.tag == "conv2d" && !conv.attrs.count("weight_block") &&
               !depthwise_row_tile(conv, registers);
  return plain && extent > 2 * lanes && extent % (2 * lanes) == lanes ? extent + lanes : 0;
}

bool transposed_epilogue(const ReductionTile& t) {
  return t.col_axis < t.row_axis && t.rows >= 4;
}

void place_epilogue_in_tile_layout(Schedule& s, const std::string& epi, const std::string& outer,
                                   int attach, const std::string& local, int vec_axis) {
  // [n, k, oh, ow] over the tile -> [n, oh, ow (unrolled), k (vectors)]; the reduction is
  // computed at its outermost loop, so over the whole tile as before.
  s.compute_at(epi, outer, attach);
  int nax = int(s.state().stage(epi).op->axes.size());
  std::vector<int> order;
  for (int a = 0; a < nax; ++a)
    if (a != vec_axis) order.push_back(a);
  order.push_back(vec_axis);
  s.reorder(epi, order);
  for (int a = 1; a < nax; ++a)
    if (a != vec_axis) s.unroll(epi, a);
  s.vectorize(epi, vec_axis);
  s.compute_at(local, epi, 0);
}

int64_t injective_vector_width(const te::OperationNode& op, int lanes) {
  if (op.axes.empty()) return 1;
  int64_t last = op.shape.back(), v = fallback_vector_width(last, lanes);
  // A long row no vector divides (197: 12 x 16 + 5): whole vectors and a shorter last one
  // (partition_tails), not a serial row (softmax's exp over ViT's scores ran scalar, 1.50 ->
  // 0.31 ms). Padding stages keep their serial rows (a 58-wide padded row, below).
  if (v == 1 && op.tag != "pad" && uneven_row_vectorizes(last, lanes)) return lanes;
  return v;
}

bool fallback_serial_row(const te::OperationNode& op, int lanes) {
  // Fused with the others, every element of such a row would pay a division and a modulo (a
  // padded 58-wide row: 64->128 stride-2 conv with its padding pass 1.63 -> 0.91 ms).
  size_t nax = op.axes.size();
  if (nax < 2 || !op.reduce_axes.empty()) return false;
  int64_t last = op.shape[nax - 1];
  return injective_vector_width(op, lanes) == 1 && last >= 8 &&
         te::num_elements(op.shape) / last >= kMinParallelTiles;
}

int64_t fallback_vector_width(int64_t extent, int lanes) {
  int64_t v = largest_divisor_leq(extent, lanes);
  return v >= 4 ? v : 1;
}

namespace {

// Windows up to 3x3: their padding is inlined and a depthwise conv's taps unrolled.
constexpr int64_t kSmallWindow = 9;
// Output planes up to 14x14: a packed 1x1 conv's tile takes whole rows (pointwise_plane_tile).
constexpr int64_t kPlanePixels = 196;

// kernel_h x kernel_w of a conv or pool, 0 for other ops.
int64_t window_size(const te::OperationNode& op) {
  return op_attr(op, "kernel_h", 0) * op_attr(op, "kernel_w", 0);
}

// A 3x3 window at stride 2 in both directions.
bool strided_3x3(const te::OperationNode& op) {
  return op_attr(op, "kernel_h", 0) == 3 && op_attr(op, "kernel_w", 0) == 3 &&
         op_attr(op, "stride_h", 0) == 2 && op_attr(op, "stride_w", 0) == 2;
}

}  // namespace

PlaneTile pointwise_plane_tile(const te::OperationNode& conv, int registers) {
  // With 16 registers a register tile over a 7- or 14-pixel row reads its input a plane
  // apart per channel (a cache line per multiply-add row) or spills. Accumulating a tile of
  // whole rows in L1 reads the input along the rows instead. AMD Zen 3, mobilenet_v2's
  // layers alone (`tuner op run`): 960 -> 320 at 7x7 0.46 -> 0.21 ms, 576 -> 96 at 14x14
  // 0.27 -> 0.13, 320 -> 1280 at 7x7 0.55 -> 0.27. At 28x28 it won alone but lost in the
  // model (32 -> 192 with its Clip 0.09 -> 0.17 ms), at 56x56 alone (24 -> 144 0.30 -> 0.40).
  PlaneTile p;
  auto wb = conv.attrs.find("weight_block");
  if (conv.tag != "conv2d" || wb == conv.attrs.end() || registers >= 32 || window_size(conv) != 1 ||
      conv.axes.size() != 4 || conv.reduce_axes.size() != 3)
    return p;
  int64_t blocks = conv.shape[1] / wb->second, oh = conv.shape[2], ow = conv.shape[3];
  if (conv.shape[0] != 1 || oh * ow > kPlanePixels) return p;
  // Two channel blocks (one or five measured slower), rows up to 196 pixels (the
  // accumulators then take 12.5 KB of L1), four input channels per pixel visit.
  p.channel_blocks = largest_divisor_leq(blocks, 2);
  p.row_block = largest_divisor_leq(oh, std::max<int64_t>(1, 196 / ow));
  p.reduce_inner = largest_divisor_leq(conv.reduce_axes[0].extent, 4);
  // Enough tiles for the threads: smaller row blocks first.
  auto tiles = [&] { return blocks / p.channel_blocks * (oh / p.row_block); };
  while (tiles() < kMinParallelTiles && p.row_block > 1) p.row_block = largest_divisor_leq(oh, p.row_block - 1);
  return p;
}

bool depthwise_row_tile(const te::OperationNode& op, int registers) {
  if (registers >= 32 || op.axes.size() != 4 || op.attrs.count("weight_block")) return false;
  if (op.tag == "conv2d") return is_depthwise(op);
  // A max pool is a depthwise conv without weights (an average pool's divisor stage is left
  // as it is; global pools have no window attributes).
  return op.tag == "pool" && window_size(op) > 0 && !op.attrs.count("count_include_pad");
}

void fill_parities_together(Schedule& s, const std::string& pad) {
  if (!s.state().has_stage(pad)) return;  // inlined
  const Stage& st = s.state().stage(pad);
  // Only split-column padding is 5-D and read by a conv2d (its activations are 4-D).
  if (st.op->tag != "pad" || st.op->axes.size() != 5 || st.op->shape[3] != 2 ||
      st.loc != Location::At || st.leaves != std::vector<int>{0, 1, 2, 3, 4})
    return;
  auto cons = s.state().consumers(pad);
  if (cons.size() != 1 || s.state().stage(cons[0]).op->tag != "conv2d") return;
  // Each parity's own pass read every input element twice (a strided vector load covers
  // both parities) and, 28 pairs wide, was not vectorized at all.
  s.reorder(pad, {0, 1, 2, 4, 3});
  s.unroll(pad, 3);
}

int fallback_padding_location(const State& st, const std::string& stage, int registers) {
  const Stage& pad = st.stage(stage);
  if (pad.op->tag != "pad" || !st.can_inline(stage)) return kPadAtRoot;
  auto cons = st.consumers(stage);
  if (cons.size() != 1 || !is_tiled_reduction(st.stage(cons[0]))) return kPadAtRoot;
  const te::OperationNode& conv = *st.stage(cons[0]).op;
  int64_t window = window_size(conv);
  if (window == 0) return kPadAtRoot;
  // Depthwise 5x5 and 7x7 windows too (efficientnet, convnext): a padding pass costs more
  // than their border tests or per-tile buffer (AVX-512, alone: 144 channels 56 -> 28 stride
  // 2 5x5 0.38 -> 0.14 ms, 672x14x14 5x5 0.16 -> 0.08, 384x14x14 7x7 0.15 -> 0.09; AVX2 with
  // per-tile padding: the first 0.52 -> 0.17, but 96x56x56 7x7 0.27 -> 0.34, so not 7x7 there).
  int64_t largest = !is_depthwise(conv) ? kSmallWindow : registers >= 32 ? 49 : 25;
  if (window > largest && !conv.attrs.count("weight_block")) return kPadAtRoot;
  // A depthwise conv's rows tile reads its padded window from a small buffer filled per tile
  // (a 10x10 or 17x17 block for an 8x8 tile): its unrolled taps then load without border
  // tests, and stride 2 gathers from a buffer in L1. mobilenet_v2 on AMD Zen, per layer in
  // the model: 32x112x112 0.72 -> 0.38 ms, 96 channels 112 -> 56 stride 2 1.43 -> 0.56,
  // 144x56x56 0.60 -> 0.34; the smaller layers unchanged.
  if (depthwise_row_tile(conv, registers)) return kPadPerTile;
  // With 16 registers the border tests of the window's loads cost more than a padding pass,
  // packed or plain (AMD Zen 1, plain 3x3 convs: 64 -> 64 at 56x56 10.6 -> 3.4 ms, 3 -> 32
  // stride 2 at 224x224 2.4 -> 0.45, 4 groups of 16 at 28x28 2.0 -> 0.5).
  return registers >= 32 ? kPadInline : kPadAtRoot;
}

int64_t fallback_accumulators(int registers) {
  // 16 of AVX2's 16 registers spilled: conv 64->64 3x3 at 56x56 with 8 rows of two vectors
  // 3.7 ms, 4 rows 1.8 ms (AMD Zen 3). 16 of AVX-512's 32 measured best there.
  return registers >= 32 ? registers / 2 : std::max(1, registers - 4);
}

namespace {

// Rows a register tile of `vectors` vectors per row may hold: at most 8, within the accumulators.
int64_t tile_rows_budget(int64_t vectors, int registers) {
  return std::max<int64_t>(1, std::min<int64_t>(8, fallback_accumulators(registers) / vectors));
}

}  // namespace

int64_t fallback_tile_rows(int64_t extent, int64_t vectors, int registers) {
  return largest_divisor_leq(extent, tile_rows_budget(vectors, registers));
}

int64_t fallback_tile_rows_with_tail(int64_t extent, int64_t vectors, int registers) {
  int64_t exact = fallback_tile_rows(extent, vectors, registers);
  // With 32 registers, two rows more per tile are worth a shorter last tile (a loop body of
  // its own, partition_tails). Intel Rocket Lake, squeezenet1_1's 64->256 3x3 at 13x13 (1
  // pixel per tile before): 0.90 -> 0.29 ms, at 27x27 1.65 -> 1.32, 55x55 6.0 -> 5.7; ViT's
  // 197x768 x 768x3072 27.5 -> 5.5 ms. Not measured on AVX2 (16 registers), which keeps exact
  // divisors.
  if (registers < 32) return exact;
  int64_t cap = tile_rows_budget(vectors, registers);
  int64_t tiles = (extent + cap - 1) / cap, even = (extent + tiles - 1) / tiles;
  return even >= exact + 2 ? even : exact;
}

ReductionTile fallback_tile(const te::OperationNode& rop, const te::OperationNode& wop, int lanes, int registers,
                            bool uneven) {
  ReductionTile t;
  bool conv = rop.tag == "conv2d" || rop.tag == "pool";
  // A conv over a packed weight vectorizes over output channels (one contiguous weight
  // vector, the input broadcast) with a row of output pixels in registers.
  auto wb = rop.attrs.find("weight_block");
  int64_t wblock = conv && wb != rop.attrs.end() ? wb->second : 0;
  int nax = int(wop.axes.size());
  // Tile sizes: rows (i / output channels) x columns (j / output width, vectorized); for a
  // packed conv, rows are output pixels and columns one weight block of output channels.
  t.row_axis = wblock ? nax - 1 : conv ? 1 : nax - 2;
  t.col_axis = wblock ? 1 : nax - 1;
  // A batch of single-row products sharing B ([b, 1, k] x [k, n]): the rows are the batch.
  if (!conv && nax >= 3 && wop.shape[size_t(t.row_axis)] == 1) t.row_axis = nax - 3;
  // A depthwise conv reads no input across channels, so with 16 registers its tile is rows
  // of output pixels instead, its taps unrolled: adjacent rows read the same input rows, one
  // load serves several taps, and no tap loop branches (AMD Zen, 3x3: 144x56x56 1.15 -> 0.61
  // ms, 192x28x28 0.38 -> 0.11, 960x7x7 0.13 -> 0.044). Measured on AVX2 only.
  if (conv && depthwise_row_tile(rop, registers)) {
    t.row_axis = 2;
    t.unroll_taps = window_size(rop) <= kSmallWindow;
  }
  int64_t rows_ext = wop.shape[size_t(t.row_axis)];
  int64_t cols_ext = wop.shape[size_t(t.col_axis)];
  // Columns: whole vectors when a power-of-two lane count divides the extent (other widths
  // legalize into several registers and spill), else the largest divisor up to a vector.
  int64_t tc = wblock;
  for (int64_t c : {int64_t(2 * lanes), int64_t(lanes), int64_t(lanes / 2), int64_t(lanes / 4)})
    if (tc == 0 && c >= 4 && cols_ext % c == 0) tc = c;
  // A divisor filling more than half a vector beats a power of two below half (a 28-wide
  // row: 14 lanes, not 4; 1x1 conv 32->192 at 28x28 0.089 -> 0.047 ms). Not above: a
  // 56-wide depthwise conv took 0.086 ms with 8 lanes, 0.135 with 14 (its loads, one per
  // multiply-add, split into pieces).
  int64_t fill = largest_divisor_leq(cols_ext, lanes);
  if (tc == 0 || (!wblock && 2 * tc < lanes && 2 * fill > lanes)) tc = fill;
  // Wider than a vector but not a multiple of one: whole vectors and a shorter last block
  // (56 = 3 x 16 + 8; partition_tails vectorizes both). 56-wide 3x3 depthwise conv 0.087 ->
  // 0.061 ms, its stride-2 form over 112 columns 0.128 -> 0.082, 3x3/2 max pool 0.068 ->
  // 0.047, 28-wide depthwise (16 + 12 lanes against 14) 0.034 -> 0.023.
  if (!wblock && tc < lanes && partial_vector_extent(cols_ext, lanes)) tc = lanes;
  // No divisor fills half a vector and none of the above applies (73, 57 = 3 x 19): whole
  // vectors and an odd last block (73 = 4 x 16 + 9), not one lane at a time. Intel Rocket
  // Lake, inception_v3's 1x1 conv 64->80 at 73x73 2.24 -> 0.25 ms; at 57x57 0.50 -> 0.18
  // (AVX2 code on the same host: 1.98 -> 0.33 and 0.46 -> 0.22).
  // ViT's attention scores, 197 columns: 12 x 16 + 5. (Only `uneven`: under a reshaping
  // epilogue, swin_t's 49 columns, bound inference took the whole product per tile, 30x.)
  // So do rows whose divisor is no power of two (55 = 5 x 11, 27 = 3 x 9), when the last
  // block keeps at least 4 lanes: an 11- or 9-lane vector is split into 8-, 2- and 1-lane
  // pieces and reassembled, where 16 + 16 + 16 + 7 splits only the last (an 18-wide 1x1 conv
  // was 1.2x slower as 16 + 2 than as 9 + 9). Intel Sapphire Rapids: squeezenet1_1's 3x3/2
  // max pool to 55x55 0.167 -> 0.085 ms, to 27x27 0.070 -> 0.050, a 96x55x55 depthwise conv
  // 0.140 -> 0.058; its AVX2 code on the same host 0.22 -> 0.11 and 0.12 -> 0.077.
  else if (uneven && !wblock && cols_ext > lanes &&
           (2 * tc < lanes || ((tc & (tc - 1)) != 0 && cols_ext % lanes >= 4)))
    tc = lanes;
  if (tc == lanes && two_vector_row_extent(rop, cols_ext, lanes, registers)) tc = 2 * lanes;
  t.cols = tc;
  // Rows: as many as keep the accumulators within the registers.
  t.rows = uneven && (wblock || !conv) ? fallback_tile_rows_with_tail(rows_ext, (tc + lanes - 1) / lanes, registers)
                                       : fallback_tile_rows(rows_ext, (tc + lanes - 1) / lanes, registers);
  // A depthwise rows tile spans the whole output row: its padded block is then filled by
  // whole input rows (cut at the border by hoist_store_guards, the middle a vector
  // copy), with no overlap between column tiles. AMD Zen 1, mobilenet_v2 in the model:
  // 96 channels 112 -> 56 stride 2 0.67 -> 0.40, 32x112x112 0.40 -> 0.32, 144x56x56 0.41 ->
  // 0.33, 576x14x14 0.225 -> 0.18 ms; resnet18's 3x3/2 max pool 0.45-0.50 -> 0.24.
  if (t.unroll_taps && cols_ext > tc) t.col_span = cols_ext;
  // A packed 1x1 conv whose pixel rows are short (7 or 14 pixels: 7 rows of one weight block
  // use 7 of the accumulators) spans two weight blocks: twice the multiply-adds per broadcast
  // input. Two accumulators over the budget are allowed here (7 rows x 2 blocks = 14): with
  // no tap loops a pointwise conv needs fewer registers besides, and 14 measured faster. mobilenet_v2 on AMD Zen: 576 -> 96 at 14x14 0.42 -> 0.38 ms, 960 -> 320 at 7x7
  // 0.57 -> 0.51, the model 1.29x -> 1.24x ORT. Not for 3x3 kernels: resnet18's layers 3-4
  // went 3.1 -> 4.5 ms each.
  if (wblock && registers < 32 && window_size(rop) == 1 && cols_ext % (2 * wblock) == 0 &&
      2 * t.rows * ((tc + lanes - 1) / lanes) <= fallback_accumulators(registers) + 2)
    t.cols = 2 * wblock;
  // A packed 3x3 stride-2 conv with 16 registers: 2 output rows x 2 pixels x 2 weight
  // blocks, 8 accumulators (7 pixels of one block left an FMA chain short) and 6 loads per
  // 8 multiply-adds (8 per 7). AMD Zen 3, one thread: 128 -> 256 at 28x28 2.13 -> 1.85 ms,
  // 64 -> 128 at 56x56 1.90 -> 1.66, 16 -> 32 at 112x112 0.81 -> 0.75; not with 3 input
  // channels (the 224x224 stem 0.46 -> 0.60: few multiply-adds per stored output). Two
  // threads: 0.99 -> 0.83 and 1.0 -> 0.82 ms alone; in resnet18 1.05 -> 1.00 and unchanged.
  if (wblock == lanes && registers < 32 && strided_3x3(rop) && rop.reduce_axes[0].extent >= 16 && rows_ext % 2 == 0 &&
      wop.shape[2] % 2 == 0 && cols_ext % (2 * wblock) == 0) {
    t.rows = 2;
    t.cols = 2 * wblock;
    t.out_rows = 2;
  }
  // (4-D convs only: shape[2] is the output rows.) Split among threads only when the tiles
  // outside the rows (batch x row blocks x axis 1's outer part) still fill the threads.
  // Blocks of up to 8 rows (a multiple of the tile's); a 1x1 conv's fewer when that leaves the threads under
  // kBalancedTiles tiles (its weights per block are one tap: smaller blocks cost little).
  if (split_rows_among_threads(rop)) {
    int64_t inner1 = t.row_axis == 1 ? t.rows : t.col_axis == 1 ? t.cols : 1;
    int64_t outer = wop.shape[0] * ((wop.shape[1] + inner1 - 1) / inner1), rows = wop.shape[2];
    auto tiles = [&](int64_t block) { return outer * (rows / block); };
    int64_t rb = t.out_rows * largest_divisor_leq(rows / t.out_rows, 8 / t.out_rows);
    if (window_size(rop) == 1) {
      int64_t b = rb;
      while (b > 1 && tiles(b) < kBalancedTiles) b = largest_divisor_leq(rows, b - 1);
      if (tiles(b) >= kBalancedTiles) rb = b;
    }
    if (tiles(rb) >= kMinParallelTiles) t.row_block = rb;
  }
  if (!conv && !rop.reduce_axes.empty()) t.k_unroll = largest_divisor_leq(rop.reduce_axes[0].extent, 4);
  if (!t.row_block) {
    int64_t tiles = 1;
    for (int a = 0; a + 1 < nax; ++a) {
      int64_t inner = a == t.row_axis ? t.rows : a == t.col_axis ? t.cols : 1;
      tiles *= (wop.shape[size_t(a)] + inner - 1) / inner;
    }
    // The last axis's blocks go to threads then (partition_tails picks a partial last
    // block's body by the parallel variable: 1x512 -> 100 0.0026 -> 0.0019 ms).
    t.last_parallel = tiles < kMinParallelTiles;
    // A matrix-vector product streams its matrix once, and one vector of columns per tile
    // is one chain of dependent multiply-adds: take up to 4 vectors of columns per tile
    // (the vectorizer's and the search's widest) while 8 tiles are left for the threads
    // (1x512 -> 1000: 0.029 -> 0.014 ms with 40 columns; 768 -> 768: 0.017 -> 0.012 with 64).
    auto tb = rop.attrs.find("transpose_b");  // B stored [n, k]: its columns are not contiguous
    if (t.last_parallel && rows_ext == 1 && !conv && (tb == rop.attrs.end() || tb->second == 0))
      for (int64_t d = std::min<int64_t>(4 * lanes, cols_ext / kMinParallelTiles); d > t.cols; --d)
        if (cols_ext % d == 0 && d % 4 == 0) {
          t.cols = d;
          break;
        }
  }
  return t;
}

bool is_row_dot_product(const State& st, const Stage& s, int lanes) {
  const auto& op = *s.op;
  auto tb = op.attrs.find("transpose_b");
  if (op.tag != "matmul" || tb == op.attrs.end() || tb->second == 0) return false;
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < op.shape.size(); ++d) rows *= op.shape[d];
  return rows <= 4 && row_reduction_vector_width(st, s.name(), lanes) > 0;
}

bool tiled_on_cpu(const State& st, const Stage& s, int lanes) {
  return is_tiled_reduction(s) && !is_row_dot_product(st, s, lanes);
}

bool row_reduction_vectorizes(int64_t extent, int lanes) { return extent >= 2 * lanes && extent % lanes == 0; }

bool uneven_row_vectorizes(int64_t extent, int lanes) {
  return extent >= 2 * lanes && extent % lanes >= 4;
}

int row_reduction_vector_width(const State& st, const std::string& stage, int lanes) {
  const Stage& s = st.stage(stage);
  if (s.op->axes.empty() || s.op->reduce_axes.empty() || s.loc != Location::Root) return 0;
  if (s.iters.size() != s.op->axes.size() + s.op->reduce_axes.size()) return 0;  // transformed
  int64_t e = s.op->reduce_axes.back().extent, others = 1;
  for (size_t k = 0; k + 1 < s.op->reduce_axes.size(); ++k) others *= s.op->reduce_axes[k].extent;
  // A plane's rows (a global pool over 56-, 28-, 14- or 7-wide rows): a divisor of the row,
  // its partial sums accumulated down the plane (as one running sum, each channel of a
  // 96x56x56 mean was 3136 dependent adds, 0.126 ms). A long row no vector divides (ViT's 197
  // attention scores): whole vectors, the last one masked (rfactor's guard).
  int64_t divisor = others >= 2 ? fallback_vector_width(e, lanes) : 1;
  int64_t width = row_reduction_vectorizes(e, lanes) ? lanes
                  : divisor > 1                      ? divisor
                  : uneven_row_vectorizes(e, lanes)  ? lanes
                                                     : 0;
  if (!width) return 0;
  // Contiguous: every tensor read indexes with the reduction only in its last dimension (a
  // sum over the channels of NCHW data would gather a vector from rows a plane apart).
  auto* red = s.op->body.as<te::ReduceNode>();
  if (!red) return 0;
  const te::VarNode* r = s.op->reduce_axes.back().var.get();
  bool contiguous = true;
  te::post_order_visit(red->source, [&](const te::Expr& e) {
    if (auto* t = e.as<te::TensorReadNode>())
      for (size_t d = 0; d + 1 < t->indices.size(); ++d) contiguous &= !te::uses_var(t->indices[d], r);
  });
  return contiguous ? int(width) : 0;
}

void vectorize_row_reduction(Schedule& s, const std::string& stage, int lanes) {
  const Stage& st = s.state().stage(stage);
  int nax = int(st.op->axes.size()), nred = int(st.op->reduce_axes.size());
  std::string rf = s.rfactor(stage, nax + nred - 1, lanes);
  std::vector<int> sp;
  for (int a = 0; a < nax; ++a) sp.push_back(a);
  int f = nax > 1 ? s.fuse(stage, sp) : 0;
  if (s.state().stage(stage).iters[size_t(f)].extent >= 2) s.parallel(stage, f);
  // rf's iterators: its spatial axes, the lane axis, then the reductions (the split one last).
  s.compute_at(rf, stage, f);
  std::vector<int> order;
  for (int a = 0; a < nax; ++a) order.push_back(a);
  for (int k = 0; k < nred; ++k) order.push_back(nax + 1 + k);
  order.push_back(nax);
  s.reorder(rf, order);
  s.vectorize(rf, nax);
}

bool split_full_reduction(Schedule& s, const std::string& stage, int lanes) {
  const Stage& st = s.state().stage(stage);
  int nred = int(st.op->reduce_axes.size());
  if (!st.op->axes.empty() || nred == 0 || st.loc != Location::Root) return false;
  if (int(st.iters.size()) != nred) return false;  // transformed
  // Long in all (a [128, 256] min and max of DynamicQuantizeLinear: 32K elements, serial
  // 0.14 ms), the partials splitting the last axis.
  int64_t e = st.op->reduce_axes.back().extent, total = 1;
  for (const auto& r : st.op->reduce_axes) total *= r.extent;
  if (total < kMinSplitReduction) return false;
  // The most partial results up to 4096 that split the axis evenly in whole vectors.
  int64_t f = 0;
  for (int64_t d = std::min<int64_t>(4096, e / 2) / lanes * lanes; d >= lanes && !f; d -= lanes)
    if (e % d == 0) f = d;
  if (!f) return false;
  std::string rf = s.rfactor(stage, nred - 1, f);
  // rf's iterators: the partials' axis, the other reductions, the split one. Vectors of
  // adjacent partials (contiguous elements), their blocks across the cores.
  std::vector<int> v = s.split(rf, 0, {lanes});
  std::vector<int> order = {v[0]};
  for (int k = 1; k <= nred; ++k) order.push_back(k);
  order.push_back(v[1]);
  s.reorder(rf, order);
  if (f / lanes >= 2) s.parallel(rf, v[0]);
  s.vectorize(rf, v[1]);
  return true;
}

Schedule fallback_schedule(const te::ComputeDAG& dag, const FallbackOptions& opts) {
  Schedule s(dag);
  Fallback(s, opts).run();
  return s;
}

}  // namespace tuner::schedule
