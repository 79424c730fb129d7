// Hand-written default schedules: correct and reasonable code for any DAG, no tuning needed.
#pragma once

#include "schedule/schedule.h"

namespace tuner::schedule {

struct FallbackOptions {
  /// float32 lanes of the target's vector registers (16 for AVX-512).
  int vector_lanes = 16;
  /// The target's vector registers (32 for AVX-512 and AArch64, 16 for AVX2): register
  /// tiles are sized for them.
  int vector_registers = 32;
};

/// The register tile the fallback gives a tiled reduction (matmul, conv, pool) `rop` whose
/// result `wop` writes (rop itself, or its elementwise epilogue).
struct ReductionTile {
  int row_axis = 0, col_axis = 0;  // axes of wop: tile rows (unrolled), columns (vectorized)
  int64_t rows = 1, cols = 1;
  /// > 1: the tile also spans this many output rows (axis 2) of a packed conv, unrolled
  /// outside its pixels.
  int64_t out_rows = 1;
  /// > cols: the outer tile spans this many columns, the register tile sweeping them in
  /// blocks of `cols` (a depthwise conv's whole output row).
  int64_t col_span = 0;
  int64_t row_block = 0;  // > 0: the output rows (axis 2) go to threads in blocks of this
  int64_t k_unroll = 1;   // reduction iterations unrolled around the tile (matmul)
  /// Too few tiles outside the last axis's blocks to share among threads (a matrix-vector
  /// product): those blocks join the parallel loop too.
  bool last_parallel = false;
  /// The reduction loops (a depthwise conv's taps) are unrolled around the tile.
  bool unroll_taps = false;
};
/// `uneven`: whether a tile may split an axis unevenly (a shorter last tile), as
/// read_in_place says of the tile's stages.
ReductionTile fallback_tile(const te::OperationNode& rop, const te::OperationNode& wop, int lanes, int registers,
                            bool uneven = true);

/// Vector accumulators the fallback's register tiles hold with `registers` vector registers:
/// half of 32, all but 4 of 16 (the tile's operands need the rest).
int64_t fallback_accumulators(int registers);
/// The fallback's tile rows over an axis of `extent` whose rows hold `vectors` vectors each:
/// the largest divisor of `extent` up to 8 that keeps within fallback_accumulators.
int64_t fallback_tile_rows(int64_t extent, int64_t vectors, int registers);
/// The tile rows of a packed conv's pixels or a matrix product's rows: as above, unless no
/// length near the budget divides the extent (13, 27, 55, 197): then even tiles, the last one
/// shorter.
int64_t fallback_tile_rows_with_tail(int64_t extent, int64_t vectors, int registers);

/// The fallback's tile for a packed 1x1 conv over a small output plane (AVX2): channel
/// blocks over blocks of whole rows, accumulated in memory. channel_blocks 0: not such a conv.
struct PlaneTile {
  int64_t channel_blocks = 0, row_block = 0, reduce_inner = 1;
};
PlaneTile pointwise_plane_tile(const te::OperationNode& conv, int registers);

/// Whether the stage writing a tile's result sweeps the tile transposed: its rows (pixels
/// along the contiguous last axis, at least 4) as vectors, its columns (a packed conv's
/// channel vectors) unrolled.
bool transposed_epilogue(const ReductionTile& t);

/// The largest divisor of n that is at most cap (1 when none above 1 is).
int64_t largest_divisor_leq(int64_t n, int64_t cap);

/// The extent a vectorized axis of `extent` is tiled over when it takes whole vectors and a
/// partial last block (56 -> 64: 3 x 16 lanes, then 8; partition_tails vectorizes both):
/// wider than a vector, not a multiple of one, the last block at least 4 lanes. 0 otherwise.
int64_t partial_vector_extent(int64_t extent, int lanes);

/// The extent a plain conv's (not packed, not a depthwise rows tile) vectorized row is tiled
/// over when it holds an odd number of vectors, more than two (56 -> 64 with 8 lanes: 3 x 16,
/// then 8): its tiles then take two vectors. 0 otherwise.
int64_t two_vector_row_extent(const te::OperationNode& conv, int64_t extent, int lanes,
                              int registers);

/// The fallback's vector width for an innermost loop of `extent`: its largest divisor up to
/// `lanes`, or 1 (not vectorized) when that is below 4.
int64_t fallback_vector_width(int64_t extent, int lanes);

/// The vector width of an injective stage's last axis: fallback_vector_width, or `lanes` for a
/// row no vector divides that uneven_row_vectorizes (whole vectors, a shorter last one) but in
/// padding stages; 1 when it does not vectorize.
int64_t injective_vector_width(const te::OperationNode& op, int lanes);

/// Whether an injective stage's last axis stays a serial loop inside the parallel loop over the
/// others: it does not vectorize (injective_vector_width is 1), is at least 8 long, and the
/// others leave the threads enough iterations.
bool fallback_serial_row(const te::OperationNode& op, int lanes);

/// Where the fallback computes a padding stage, as a compute-location decision
/// (SampleComputeLocation): inlined, a pass of its own, or at the first loop of its reader's
/// tile (a block of the padded input per tile).
inline constexpr int kPadInline = -2, kPadAtRoot = -1, kPadPerTile = 0;

/// Whether a conv or pool is tiled as rows of output pixels with its taps unrolled (a
/// depthwise conv or a max pool, with fewer than 32 vector `registers`).
bool depthwise_row_tile(const te::OperationNode& conv, int registers);

/// Where the fallback computes the padding stage `stage` read by a conv or pool it tiles:
/// per tile for a depthwise conv's rows tile; else inlined on a target with 32 vector
/// `registers` (with 16 the border tests cost more than a padding pass) into a packed conv or
/// a window of at most 3x3 (larger windows test too many vector loads); else a pass of its own.
int fallback_padding_location(const State& st, const std::string& stage, int registers);

/// For a stride-2 depthwise conv's padding block with its columns split by parity
/// ([n, c, row, parity, pair]) computed at a loop of the conv: puts the parity loop inside the
/// pair loop, unrolled, so one pass over each input row fills both parities. Else nothing.
void fill_parities_together(Schedule& s, const std::string& pad);

/// For a tile stored transposed (its vectors along `vec_axis`, the output's rows stored as
/// vectors) whose epilogue computes a transcendental: `epi`, a cache_write of the epilogue
/// `outer` made before `outer` was transformed, is computed at `outer`'s loop `attach` in the
/// tile's layout (vectors along `vec_axis`, the rest unrolled), and the tile's `local` at its
/// outermost loop; `outer` only copies it out transposed. Shared by the fallback and the
/// search's tiling rule.
void place_epilogue_in_tile_layout(Schedule& s, const std::string& epi, const std::string& outer,
                                   int attach, const std::string& local, int vec_axis);

/// The default schedule of a DAG, as a replayable Schedule.
Schedule fallback_schedule(const te::ComputeDAG& dag, const FallbackOptions& opts = {});

/// Whether an innermost reduction of `extent` is long enough to vectorize through rfactor: at
/// least two whole vectors of `lanes`.
bool row_reduction_vectorizes(int64_t extent, int lanes);
/// Whether a row of `extent` no vector of `lanes` divides is still worth vectorizing as whole
/// vectors and a shorter last one: at least two vectors long, the last at least 4 lanes.
bool uneven_row_vectorizes(int64_t extent, int lanes);
/// For a reduction (computed at root, untransformed) whose innermost reduction is read
/// contiguously: the vector width rfactor can give it, `lanes` when it is long enough
/// (row_reduction_vectorizes), a divisor of at least 4 when other reduction axes come before
/// it (the rows of a plane), else `lanes` with the last vector masked when
/// uneven_row_vectorizes; 0 when none.
int row_reduction_vector_width(const State& st, const std::string& stage, int lanes);
/// A product of at most 4 rows with B stored [n, k] (dense) whose k vectorize_row_reduction
/// can vectorize: each output is the dot product of two contiguous rows. A register tile over
/// n would gather B, one element per lane (1x512 -> 1000: 0.054 ms tiled, 0.0105 as dot
/// products; 4 rows 0.059 -> 0.043; at 8 rows the tile wins, 0.064 against 0.084).
bool is_row_dot_product(const State& st, const Stage& s, int lanes);
/// A reduction the CPU fallback and search space tile into registers: is_tiled_reduction,
/// but not a row dot product.
bool tiled_on_cpu(const State& st, const Stage& s, int lanes);
/// Vectorizes such a reduction: `stage.rf` = one vector of `lanes` (the width above) partial
/// results per output, computed inside the output's fused, parallel spatial loop and summed
/// across lanes by `stage` (softmax's and layer norm's row sums, max and variance; global
/// pools).
void vectorize_row_reduction(Schedule& s, const std::string& stage, int lanes);

/// A reduction to one value over a long innermost axis (a ReduceMean of a whole tensor):
/// `stage.rf` sums up to 4096 interleaved partial results in parallel, one vector of adjacent
/// ones at a time, and `stage` sums those. In float32 one running sum of 4M elements was 1.5e-3
/// off; each partial sums ~1000. False, changing nothing, when it does not apply.
bool split_full_reduction(Schedule& s, const std::string& stage, int lanes);

}  // namespace tuner::schedule
