#include "schedule/winograd_schedule.h"

#include <algorithm>

#include "schedule/analysis.h"
#include "schedule/fallback.h"

namespace tuner::schedule {

namespace {

// The sizes every one-kernel schedule of these stages shares.
struct Geometry {
  int64_t n, tiles_h, row, kdim;
};

Geometry geometry(const State& st, const WinogradStages& w) {
  const auto& out = st.stage(w.out).op->shape;
  return {out[0], (out[2] + 3) / 4, st.stage(w.v).op->attrs.at("row"), st.stage(w.m).op->shape[2]};
}

// Accumulators of the products' register tile the search may take: 24 of AVX-512's 32
// vector registers, 12 of AVX2's 16 (the tile's operands need a few more).
int64_t max_accumulators(int registers) {
  return std::max(fallback_accumulators(registers), int64_t(registers - registers / 4));  // the fallback's tile is a candidate
}
// Tiles per block the search may take: V and M of a block (36 x tiles x channels each)
// should stay near L2.
constexpr int64_t kMaxBlockTiles = 64;

// Transformed weights above this are not expected to stay in a core's L2 between blocks.
constexpr int64_t kLargeWeightBytes = int64_t(1) << 20;

// The fallback's rows per block: at least 16 tiles reuse each transformed weight read, while
// two blocks per image are left for the threads.
int64_t fallback_rows(const Geometry& g) { return std::max<int64_t>(1, std::min(16 / g.row, g.tiles_h / 2)); }

// Blocks (parallel iterations before the parts of k) of `rows` tile rows each.
int64_t num_blocks(const Geometry& g, int64_t rows) { return g.n * ((g.tiles_h + rows - 1) / rows); }

// Vectors of output channels.
int64_t channel_vectors(const Geometry& g, int lanes) { return g.kdim / largest_divisor_leq(g.kdim, lanes); }

bool contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

}  // namespace

std::optional<WinogradStages> winograd_conv_stages(const State& st, const std::string& stage) {
  const te::OperationNode* out = inlined_tag(st, stage, "winograd_output");
  if (!out) return std::nullopt;
  std::string m = producer_tagged(st, out->name, "matmul");
  std::string v = m.empty() ? "" : producer_tagged(st, m, "winograd_input");
  if (v.empty() || st.stage(m).loc != Location::Root || st.stage(v).loc != Location::Root)
    return std::nullopt;
  return WinogradStages{stage, m, v};
}

WinogradBlock fallback_winograd_block(const State& st, const WinogradStages& w, int lanes, int registers) {
  Geometry g = geometry(st, w);
  WinogradBlock b;
  b.rows = fallback_rows(g);
  b.tile_p = std::min<int64_t>(g.row, 4);
  b.tile_k = largest_divisor_leq(channel_vectors(g, lanes),
                                 std::max<int64_t>(1, fallback_accumulators(registers) / b.tile_p));
  // A large transformed weight is read once per block, from memory in a whole model: one
  // block per image then, its channels in two parts for the threads (resnet18's 128-channel
  // layers at 28x28, U 2.4 MB, in the model: 1.6-1.8 -> 1.0-1.3 ms). Taken only where the
  // search's space holds it (the fallback is the search's starting point).
  const te::OperationNode& v = *st.stage(w.v).op;  // V [36, C, P]; U is [36, C, K]
  int64_t u_bytes = v.shape[0] * v.shape[1] * g.kdim * v.dtype.bytes();
  if (u_bytes > kLargeWeightBytes && g.n == 1 && contains(winograd_rows_candidates(st, w), g.tiles_h) &&
      contains(winograd_k_parts_candidates(st, w, g.tiles_h, b.tile_k, lanes), 2)) {
    b.rows = g.tiles_h;
    b.k_parts = 2;
  }
  return b;
}

std::vector<int64_t> winograd_rows_candidates(const State& st, const WinogradStages& w) {
  Geometry g = geometry(st, w);
  std::vector<int64_t> out;
  int64_t last_blocks = 0;
  for (int64_t r = 1; r <= g.tiles_h; ++r) {
    int64_t blocks = num_blocks(g, r);
    if (blocks == last_blocks) continue;  // the same blocks, only more padding
    if (r > 1 && r * g.row > kMaxBlockTiles) break;  // one block is fine: k_parts share it
    out.push_back(r);
    last_blocks = blocks;
  }
  // The fallback's rows may give the same blocks as a smaller count (kept above).
  if (!contains(out, fallback_rows(g))) out.push_back(fallback_rows(g));
  return out;
}

std::vector<int64_t> winograd_tile_p_candidates(const State& st, const WinogradStages& w, int64_t rows) {
  int64_t tiles = rows * geometry(st, w).row;
  std::vector<int64_t> out;
  for (int64_t p : {1, 2, 4, 8})
    if (p <= tiles && tiles % p == 0) out.push_back(p);
  return out;
}

std::vector<int64_t> winograd_tile_k_candidates(const State& st, const WinogradStages& w, int64_t rows,
                                                int64_t tile_p, int lanes, int registers) {
  Geometry g = geometry(st, w);
  int64_t vectors = channel_vectors(g, lanes);
  // One block: the tile must leave at least two parts of the channels for the threads.
  bool one_block = num_blocks(g, rows) < 2;
  std::vector<int64_t> out;
  for (int64_t k = 1; k <= vectors; ++k)
    if (vectors % k == 0 && (k == 1 || tile_p * k <= max_accumulators(registers)) &&
        (!one_block || vectors % (2 * k) == 0))
      out.push_back(k);
  if (out.empty()) out.push_back(1);  // an odd count of vectors: no parts
  return out;
}

std::vector<int64_t> winograd_k_parts_candidates(const State& st, const WinogradStages& w, int64_t rows,
                                                 int64_t tile_k, int lanes) {
  Geometry g = geometry(st, w);
  int64_t vectors = channel_vectors(g, lanes);
  std::vector<int64_t> out;
  for (int64_t p : {1, 2, 4})
    if (vectors % (p * tile_k) == 0 && num_blocks(g, rows) * p >= 2) out.push_back(p);
  if (out.empty()) out.push_back(1);  // one block and one vector of channels: nothing to share
  return out;
}

// Output: [k.p, n, h.o] parallel, [k.o, w.o, w.m], h.i and w.i unrolled, k.i vectorized; w is
// split by a whole padded row so M covers the row's tiles as whole vectors. The parts of k
// go outermost: a thread's iterations then share its part of the transformed weight.
// M: [p.o (one), e, k.o, p.m, c, p.i, k.m] with a p.i x k.m register tile of vectors.
// V at M's p.o: [c, p.o, e, p.i], e unrolled, p.i vectorized; its tile copy at V's p.o,
// with the zero padding inlined there.
std::vector<std::string> schedule_winograd_conv(Schedule& s, const WinogradStages& w, const WinogradBlock& b,
                                                int lanes) {
  Geometry g = geometry(s.state(), w);
  int64_t kv = largest_divisor_leq(g.kdim, lanes);
  // One part: no split for it, so the schedule (and its trace) is the one before parts
  // existed, and in-model choices timed against it stay current.
  std::vector<int64_t> kf{kv};
  if (b.k_parts > 1) kf.insert(kf.begin(), g.kdim / (kv * b.k_parts));
  auto k = s.split(w.out, 1, kf);  // [k.p,] k.o, k.i
  int k_out = k[k.size() - 2], k_vec = k.back();
  auto h = s.split(w.out, 2, {b.rows, 4});
  auto wi = s.split(w.out, 3, {g.row, 4});
  std::vector<int> parallel{0, h[0]};
  if (b.k_parts > 1) parallel.insert(parallel.begin(), k[0]);
  std::vector<int> order = parallel;
  for (int i : {k_out, h[1], wi[0], wi[1], h[2], wi[2], k_vec}) order.push_back(i);
  s.reorder(w.out, order);
  int f = s.fuse(w.out, parallel);
  s.parallel(w.out, f);
  s.unroll(w.out, h[2]);
  s.unroll(w.out, wi[2]);
  if (kv > 1) s.vectorize(w.out, k_vec);
  s.compute_at(w.m, w.out, f);

  auto mp = s.split(w.m, 1, {b.rows * g.row / b.tile_p, b.tile_p});
  auto mk = s.split(w.m, 2, {b.tile_k, kv});
  s.reorder(w.m, {mp[0], 0, mk[0], mp[1], 3, mp[2], mk[1], mk[2]});
  s.unroll(w.m, mp[2]);
  s.unroll(w.m, mk[1]);
  if (kv > 1) s.vectorize(w.m, mk[2]);
  s.compute_at(w.v, w.m, mp[0]);

  // Vectors over the block's tiles: two rows of 8 tiles fill one 16-lane vector.
  auto vp = s.split(w.v, 2, {b.rows * g.row <= 2 * lanes ? b.rows * g.row : g.row});
  s.reorder(w.v, {1, vp[0], 0, vp[1]});
  s.unroll(w.v, 0);
  s.vectorize(w.v, vp[1]);
  std::vector<std::string> done{w.out, w.m, w.v};
  for (auto& t : schedule_winograd_tile_copy(s, w.v, vp[0], true)) done.push_back(t);
  return done;
}

std::vector<std::string> schedule_winograd_tile_copy(Schedule& s, const std::string& v, int iter,
                                                     bool inline_pad) {
  std::string tile = producer_tagged(s.state(), v, "winograd_tile");
  if (tile.empty()) return {};
  std::vector<std::string> done{tile};
  std::string pad = producer_tagged(s.state(), tile, "pad");
  if (inline_pad && !pad.empty() && s.state().stage(pad).loc == Location::Root) {
    s.compute_inline(pad);
    done.push_back(pad);
  }
  s.compute_at(tile, v, iter);
  s.unroll(tile, 0);
  s.vectorize(tile, 2);
  return done;
}

}  // namespace tuner::schedule
