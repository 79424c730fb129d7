// Schedules of a Winograd convolution in one kernel (ops::winograd_conv): the fallback's, and
// the search's, which draws the block and register-tile sizes the fallback fixes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "schedule/schedule.h"

namespace tuner::schedule {

/// The stages of a winograd_conv DAG scheduled together: `out` writes the result (the output
/// transform, or the epilogue it is inlined into), `m` the 36 products, `v` the input transform.
struct WinogradStages {
  std::string out, m, v;
};

/// The stages when `stage` (computed at root) writes a winograd_conv's result, else nothing.
std::optional<WinogradStages> winograd_conv_stages(const State& st, const std::string& stage);

/// The sizes a one-kernel Winograd schedule leaves open.
struct WinogradBlock {
  int64_t rows = 1;    ///< rows of output tiles per block (a block is one parallel iteration)
  int64_t tile_p = 1;  ///< tiles in the products' register tile
  int64_t tile_k = 1;  ///< vectors of output channels in the products' register tile
  /// Parallel parts of the output channels: each block's products for 1/k_parts of them (the
  /// input transform computed once per part), so a layer with few blocks and a large
  /// transformed weight shares both the work and the weight's reads among the threads.
  int64_t k_parts = 1;
};

/// The fallback's sizes: blocks of at least 16 tiles (each transformed weight read is reused
/// that often) while two blocks per image are left for the threads; a register tile within
/// fallback_accumulators(registers).
WinogradBlock fallback_winograd_block(const State& st, const WinogradStages& w, int lanes, int registers);

/// The sizes the search draws from (each list holds the fallback's choice, so the search's
/// starting point is the fallback): rows of at most 64 tiles per block, register tiles of at
/// most 3/4 of the vector registers in accumulators, and parts of the output channels that
/// leave at least two parallel iterations.
std::vector<int64_t> winograd_rows_candidates(const State& st, const WinogradStages& w);
std::vector<int64_t> winograd_tile_p_candidates(const State& st, const WinogradStages& w, int64_t rows);
std::vector<int64_t> winograd_tile_k_candidates(const State& st, const WinogradStages& w, int64_t rows,
                                                int64_t tile_p, int lanes, int registers);
std::vector<int64_t> winograd_k_parts_candidates(const State& st, const WinogradStages& w, int64_t rows,
                                                 int64_t tile_k, int lanes);

/// The one-kernel schedule: per part of the output channels and block of tile rows
/// (parallel), M computed into a local buffer, V at M's block loop, the tile copy at V's (see
/// schedule/winograd_schedule.cc). Returns the stages it scheduled.
std::vector<std::string> schedule_winograd_conv(Schedule& s, const WinogradStages& w, const WinogradBlock& b,
                                                int lanes);

/// The input transform's tile copy (its 36 elements x a vector of tiles) at loop `iter` of the
/// transform `v`; `inline_pad` reads the input with its border test instead of a padded copy.
/// Returns the stages it scheduled.
std::vector<std::string> schedule_winograd_tile_copy(Schedule& s, const std::string& v, int iter,
                                                     bool inline_pad);

}  // namespace tuner::schedule
