#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <sstream>
#include <vector>

#include "ops/elementwise.h"
#include "ops/nn.h"
#include "ops/registry.h"
#include "ops/transform.h"
#include "schedule/fallback.h"
#include "schedule/lower.h"

using namespace tuner;

namespace {

// AVX2's vector unit: 8 float lanes, 16 registers.
schedule::FallbackOptions avx2_fallback() {
  schedule::FallbackOptions fo;
  fo.vector_lanes = 8;
  fo.vector_registers = 16;
  return fo;
}

}  // namespace

// The fallback's vector over a conv's output width: a power of two dividing it, unless that
// is below half a vector and a larger divisor fills more than half (a 14-wide row: 14 lanes).
// Wider than a vector: whole vectors and a shorter last block (56 = 3 x 16 + 8; 55 = 3 x 16 +
// 7 rather than 5 x 11), also when the column blocks go to threads (too few rows of tiles).
TEST(Fallback, ConvRowsFillTheVector) {
  auto vector_width = [](int64_t width, int64_t height) {
    auto& def = ops::find_op("conv2d");
    std::string w = "w=" + std::to_string(width), h = "h=" + std::to_string(height);
    auto dag = def.build(ops::parse_params(def, {"c=4", h, w, "k=8", "kh=1", "kw=1"}));
    schedule::FallbackOptions fo;
    fo.vector_lanes = 16;
    auto s = schedule::fallback_schedule(dag, fo);
    int64_t lanes = 0;
    for (auto& st : s.state().stages())
      for (int id : st.leaves)
        if (st.iters[size_t(id)].ann == schedule::Annotation::Vectorize)
          lanes = std::max(lanes, st.iters[size_t(id)].extent);
    return lanes;
  };
  EXPECT_EQ(vector_width(28, 16), 16);
  EXPECT_EQ(vector_width(14, 16), 14);
  EXPECT_EQ(vector_width(64, 16), 32);
  EXPECT_EQ(vector_width(56, 16), 16);
  EXPECT_EQ(vector_width(24, 16), 16);
  EXPECT_EQ(vector_width(12, 16), 12);
  EXPECT_EQ(vector_width(7, 16), 7);
  EXPECT_EQ(vector_width(18, 16), 9);  // a last block of 2 lanes: not worth a vector
  EXPECT_EQ(vector_width(73, 16), 16);  // 4 x 16 + 9: no divisor but 1 (it ran lane by lane)
  EXPECT_EQ(vector_width(57, 16), 16);  // 3 x 16 + 9: better than 3 lanes
  EXPECT_EQ(vector_width(48, 16), 32);  // three vectors: tiles of two, the last block one
  EXPECT_EQ(vector_width(55, 16), 16);  // 3 x 16 + 7, not 5 x 11 (pieces of 8, 2 and 1)
  EXPECT_EQ(vector_width(27, 16), 16);  // 16 + 11, not 3 x 9
  // 4 rows of tiles for 2 threads: the column blocks join the parallel loop, whose body
  // partition_tails picks by its variable, so the partial last block stays.
  EXPECT_EQ(vector_width(56, 4), 16);
  EXPECT_EQ(vector_width(28, 4), 16);
}

// A matrix product over a packed B runs B's panels outside the row tiles, when there are
// panels enough for the threads: each thread's row tiles then reuse one panel from L2 instead
// of sweeping all of B per row tile (bert's 128x768 x 768x3072 2.9 -> 1.6 ms).
TEST(Fallback, PackedMatmulsRunPanelsOutsideRowTiles) {
  auto& def = ops::find_op("matmul");
  auto outermost = [&](const std::string& n) {
    auto dag = def.build(ops::parse_params(def, {"m=64", "n=" + n, "k=32", "wblock=32"}));
    schedule::FallbackOptions fo;
    fo.vector_lanes = 16;
    fo.vector_registers = 32;
    auto s = schedule::fallback_schedule(dag, fo);
    const schedule::Stage& st = s.state().stage("matmul");
    return st.iters[size_t(st.leaves[0])].name;
  };
  EXPECT_EQ(outermost("768"), "j.0");  // 24 panels
  EXPECT_EQ(outermost("64"), "i.0");   // 2 panels: rows among the threads, as before
}

// A matrix product of 197 rows takes tiles of 8 and a shorter last one when its epilogue reads
// it in place; under a reshape (swin_t's attention scores) exact tiles, since bound inference
// through the reshape's index arithmetic took the whole product per tile (2000x slower).
TEST(Fallback, UnevenTilesOnlyWhereTheEpilogueReadsInPlace) {
  te::Tensor a = te::placeholder({197, 32}, te::DataType::f32(), "a");
  te::Tensor b = te::placeholder({32, 48}, te::DataType::f32(), "b");
  te::Tensor bias = te::placeholder({48}, te::DataType::f32(), "bias");
  auto row_split = [](const te::ComputeDAG& dag) {
    schedule::FallbackOptions fo;
    fo.vector_lanes = 16;
    fo.vector_registers = 32;
    auto s = schedule::fallback_schedule(dag, fo);
    for (const auto& st : s.state().stages())
      if (st.op->tag == "matmul")
        for (int id : st.leaves)
          if (st.iters[size_t(id)].name == "i.1") return st.iters[size_t(id)].extent;
    return int64_t(-1);
  };
  te::Tensor mm = ops::matmul(a, b);
  EXPECT_EQ(row_split(te::ComputeDAG({a, b, bias}, {ops::add(mm, bias)})), 8);
  te::Tensor r = ops::reshape(ops::add(mm, bias, "add0"), {1, 197, 6, 8}, "r0");
  EXPECT_EQ(row_split(te::ComputeDAG({a, b, bias}, {ops::reshape(ops::add(r, r, "add1"), {197, 48}, "r1")})), 1);
}

// A register tile's accumulators fit the target's registers with room for its operands:
// 16 of AVX-512's 32, 12 of AVX2's 16 (16 spilled there: conv 64->64 3x3 at 56x56 2x slower).
TEST(Fallback, RegisterTilesFitTheRegisters) {
  auto& def = ops::find_op("conv2d");
  auto accumulators = [&](const std::string& w, int lanes, int registers) {
    auto dag = def.build(ops::parse_params(def, {"c=64", "h=" + w, "w=" + w, "k=64", "pad=1", "wblock=16"}));
    const te::OperationNode& conv = *dag.outputs()[0];
    schedule::ReductionTile t = schedule::fallback_tile(conv, conv, lanes, registers);
    EXPECT_EQ(t.cols, 16);
    return t.rows * t.cols / lanes;
  };
  EXPECT_EQ(accumulators("56", 16, 32), 8);   // 8 rows of one 16-lane vector
  EXPECT_EQ(accumulators("56", 8, 32), 16);   // 8 rows of two 8-lane vectors
  EXPECT_EQ(accumulators("56", 8, 16), 8);    // AVX2: 4 rows (6 do not divide 56)
  EXPECT_EQ(accumulators("12", 8, 16), 12);   // 6 rows of two vectors
  EXPECT_EQ(accumulators("7", 8, 16), 2);     // one row: the pass packs 7-wide outputs by 8
  EXPECT_EQ(schedule::fallback_accumulators(16), 12);
  EXPECT_EQ(schedule::fallback_accumulators(32), 16);
}

// A packed conv's pixels, or a matrix product's rows, per tile: where no length near the
// budget (8) divides the extent,
// even tiles and a shorter last one with 32 registers (13 took 1 pixel per tile, 3x slower);
// exact divisors otherwise, and always with 16 registers.
TEST(Fallback, TileRowsOfExtentsWithoutAGoodDivisor) {
  using schedule::fallback_tile_rows_with_tail;
  EXPECT_EQ(fallback_tile_rows_with_tail(13, 1, 32), 7);   // 7 + 6
  EXPECT_EQ(fallback_tile_rows_with_tail(27, 2, 32), 7);   // 7 + 7 + 7 + 6 (a divisor: 3)
  EXPECT_EQ(fallback_tile_rows_with_tail(55, 1, 32), 8);   // 6 x 8 + 7 (a divisor: 5)
  EXPECT_EQ(fallback_tile_rows_with_tail(111, 2, 32), 8);  // a divisor: 3
  EXPECT_EQ(fallback_tile_rows_with_tail(197, 2, 32), 8);  // ViT's tokens: prime (1 row per tile ran 5x slower)
  for (int64_t w : {7, 14, 28, 56, 112}) EXPECT_EQ(fallback_tile_rows_with_tail(w, 2, 32), schedule::fallback_tile_rows(w, 2, 32)) << w;
  EXPECT_EQ(fallback_tile_rows_with_tail(147, 1, 32), 7);  // 147 = 21 x 7: within two of 8
  EXPECT_EQ(fallback_tile_rows_with_tail(13, 1, 16), 1);
  EXPECT_EQ(fallback_tile_rows_with_tail(13, 2, 16), 1);
}

// With 16 registers a packed 1x1 conv over short rows (7 or 14 pixels) spans two weight
// blocks, so its tile fills the accumulators; 3x3 convs and long rows keep one block.
TEST(Fallback, ShortRowPackedPointwiseConvSpansTwoWeightBlocks) {
  auto& def = ops::find_op("conv2d");
  auto tile = [&](const std::string& w, const std::string& k, int registers) {
    auto dag = def.build(ops::parse_params(
        def, {"c=64", "h=" + w, "w=" + w, "k=96", "kh=" + k, "kw=" + k, "pad=" + std::string(k == "3" ? "1" : "0"), "wblock=8"}));
    const te::OperationNode& conv = *dag.outputs()[0];
    return schedule::fallback_tile(conv, conv, 8, registers);
  };
  auto t14 = tile("14", "1", 16);
  EXPECT_EQ(t14.cols, 16);
  EXPECT_EQ(t14.rows, 7);
  EXPECT_EQ(tile("7", "1", 16).cols, 16);
  EXPECT_EQ(tile("14", "3", 16).cols, 8);   // 3x3: one block
  EXPECT_EQ(tile("56", "1", 16).cols, 8);   // 8 rows of a block already fill the tile
  EXPECT_EQ(tile("14", "1", 32).cols, 8);   // AVX-512: not measured there
}

// With 16 registers a packed 1x1 conv over a plane of up to 14x14 accumulates two channel
// blocks over blocks of whole rows (up to 196 pixels) in memory, four input channels per
// visit of a pixel; smaller row blocks when the threads would get under 8 tiles.
TEST(Fallback, SmallPlanePackedPointwiseConvAccumulatesWholeRows) {
  auto& def = ops::find_op("conv2d");
  auto build = [&](const std::string& c, const std::string& hw, const std::string& k, const std::string& kh) {
    return def.build(ops::parse_params(def, {"c=" + c, "h=" + hw, "w=" + hw, "k=" + k, "kh=" + kh, "kw=" + kh,
                                             "pad=" + std::string(kh == "3" ? "1" : "0"), "wblock=8"}));
  };
  auto plane = [&](const std::string& c, const std::string& hw, const std::string& k, const std::string& kh = "1",
                   int registers = 16) {
    auto dag = build(c, hw, k, kh);
    auto p = schedule::pointwise_plane_tile(*dag.outputs()[0], registers);
    return std::vector<int64_t>{p.channel_blocks, p.row_block, p.reduce_inner};
  };
  EXPECT_EQ(plane("960", "7", "320"), (std::vector<int64_t>{2, 7, 4}));
  EXPECT_EQ(plane("576", "14", "96"), (std::vector<int64_t>{2, 7, 4}));   // 6 tiles of 14 rows: 7
  EXPECT_EQ(plane("96", "14", "576"), (std::vector<int64_t>{2, 14, 4}));
  EXPECT_EQ(plane("192", "28", "32")[0], 0);                              // 28x28: register tiles
  EXPECT_EQ(plane("30", "7", "40"), (std::vector<int64_t>{1, 1, 3}));     // 5 blocks: rows one by one
  EXPECT_EQ(plane("24", "56", "144")[0], 0);                              // a larger plane
  EXPECT_EQ(plane("64", "7", "64", "3")[0], 0);                           // 3x3
  EXPECT_EQ(plane("960", "7", "320", "1", 32)[0], 0);                     // AVX-512
  // The fallback's kernel: a tile of 16 channels x 49 pixels in memory, the input channels'
  // outer loop around its pixels.
  std::string lowered = schedule::lower(schedule::fallback_schedule(build("960", "7", "320", "1"), avx2_fallback()).state(), "k").str();
  EXPECT_NE(lowered.find("x 784] local"), std::string::npos) << lowered;
  size_t rc = lowered.find("for rc"), px = lowered.find("for k in");
  ASSERT_NE(px, std::string::npos) << lowered;
  EXPECT_LT(rc, px) << lowered;
}

// Threads split a conv's output rows in blocks of up to 8; a 1x1 conv whose blocks would
// leave the threads under 32 tiles takes smaller ones (96 -> 24 at 56x56, tiles of 6
// channels: 7 x 4 = 28 tiles, 7-row blocks make 32). A 3x3 conv keeps 8-row blocks.
TEST(Fallback, PointwiseRowBlocksLeaveTheThreadsManyTiles) {
  auto& def = ops::find_op("conv2d");
  auto row_block = [&](const std::string& c, const std::string& k, const std::string& w, const std::string& kh) {
    auto dag = def.build(ops::parse_params(def, {"c=" + c, "h=" + w, "w=" + w, "k=" + k, "kh=" + kh,
                                                 "kw=" + kh, "pad=" + std::string(kh == "3" ? "1" : "0")}));
    const te::OperationNode& conv = *dag.outputs()[0];
    return schedule::fallback_tile(conv, conv, 8, 16).row_block;
  };
  EXPECT_EQ(row_block("96", "24", "56", "1"), 7);
  EXPECT_EQ(row_block("144", "24", "56", "1"), 7);
  EXPECT_EQ(row_block("32", "16", "112", "1"), 8);  // 14 x 4 tiles of 4 channels
  EXPECT_EQ(row_block("96", "256", "56", "1"), 8);  // already 7 x 32 tiles
  EXPECT_EQ(row_block("96", "24", "56", "3"), 8);
}

// With 16 registers a packed 3x3 stride-2 conv tiles 2 output rows x 2 pixels x 2 weight
// blocks (8 accumulators), its thread blocks of rows a multiple of 2; not with 3 input
// channels, an odd output width or 32 registers.
TEST(Fallback, StridedPackedConvTilesTwoRowsOfTwoPixels) {
  auto& def = ops::find_op("conv2d");
  auto build = [&](const std::string& c, const std::string& hw, const std::string& k) {
    return def.build(ops::parse_params(def, {"c=" + c, "h=" + hw, "w=" + hw, "k=" + k, "stride=2", "pad=1", "wblock=8"}));
  };
  auto tile = [&](const std::string& c, const std::string& hw, const std::string& k, int registers = 16) {
    auto dag = build(c, hw, k);
    return schedule::fallback_tile(*dag.outputs()[0], *dag.outputs()[0], 8, registers);
  };
  auto t = tile("128", "28", "256");
  EXPECT_EQ(std::vector<int64_t>({t.out_rows, t.rows, t.cols, t.row_block}), std::vector<int64_t>({2, 2, 16, 0}));
  auto split = tile("64", "56", "128");  // 28 output rows: blocks of 4 for the threads
  EXPECT_EQ(std::vector<int64_t>({split.out_rows, split.rows, split.row_block}), std::vector<int64_t>({2, 2, 4}));
  EXPECT_EQ(tile("3", "224", "32").out_rows, 1);
  EXPECT_EQ(tile("256", "14", "512").out_rows, 1);  // 7 pixels wide
  EXPECT_EQ(tile("128", "28", "256", 32).out_rows, 1);
  // The kernel: 8 accumulator vectors, the tile's rows and pixels unrolled inside the taps.
  std::string lowered = schedule::lower(schedule::fallback_schedule(build("128", "28", "256"), avx2_fallback()).state(), "k").str();
  EXPECT_NE(lowered.find("[float32 x 64] local"), std::string::npos) << lowered;
  size_t rw = lowered.find("for rw"), acc = lowered.find("conv2d.local[ramp(56, 1, 8)] =");
  ASSERT_NE(rw, std::string::npos) << lowered;
  EXPECT_LT(rw, acc) << lowered;
}

// A packed conv's tile holds channel vectors and is stored transposed into the output rows.
// An epilogue with a sigmoid is computed before the transposition, on whole channel vectors
// (after it, on vectors of the tile's 7 or 8 pixels, it took 2x per element); a cheap one (ReLU)
// stays inside the transposing store.
TEST(Fallback, TranscendentalEpiloguesRunOnTheTilesChannelVectors) {
  auto& def = ops::find_op("conv2d");
  for (bool silu : {false, true}) {
    auto conv = def.build(ops::parse_params(
        def, {"c=3", "h=56", "w=56", "k=32", "stride=2", "pad=1", "wblock=32", "bias=1"}));
    te::Tensor y = silu ? ops::silu(conv.outputs()[0]) : ops::relu(conv.outputs()[0]);
    schedule::FallbackOptions fo;
    fo.vector_lanes = 16;
    fo.vector_registers = 32;
    auto s = schedule::fallback_schedule(te::ComputeDAG(conv.inputs(), {y}), fo);
    std::string lowered = schedule::lower(s.state(), "k").str();
    SCOPED_TRACE(lowered);
    EXPECT_EQ(s.state().has_stage(y->name + ".local"), silu);
    if (silu) {
      EXPECT_TRUE(std::regex_search(lowered, std::regex(R"(silu\.local\[ramp\(\d+, 1, 32\)\] = )")));
      EXPECT_TRUE(std::regex_search(lowered, std::regex(R"(= silu\.local\[ramp\(\d+, 32, 7\)\])")));
      EXPECT_EQ(lowered.find("sigmoid("), lowered.find("sigmoid((conv2d"));
    }
  }
}

// With 16 registers a depthwise conv's tile is output rows (axis 2) with its 3x3 taps
// unrolled, so adjacent rows share input loads; with 32 it stays channels x pixels.
TEST(Fallback, DepthwiseTilesRowsWithSixteenRegisters) {
  auto& def = ops::find_op("depthwise_conv2d");
  auto tile = [&](const std::string& k, int registers) {
    auto dag = def.build(ops::parse_params(def, {"c=96", "h=28", "w=28", "pad=1", "kh=" + k, "kw=" + k}));
    const te::OperationNode& conv = *dag.outputs()[0];
    return schedule::fallback_tile(conv, conv, 8, registers);
  };
  auto avx2 = tile("3", 16);
  EXPECT_EQ(avx2.row_axis, 2);
  EXPECT_EQ(avx2.col_axis, 3);
  EXPECT_EQ(avx2.rows, 7);  // the largest divisor of 28 up to 8
  EXPECT_TRUE(avx2.unroll_taps);
  EXPECT_FALSE(tile("5", 16).unroll_taps);  // 25 taps: not unrolled
  auto avx512 = tile("3", 32);
  EXPECT_EQ(avx512.row_axis, 1);
  EXPECT_FALSE(avx512.unroll_taps);
  // The outer tile spans the whole output row, the register tile sweeping it.
  EXPECT_EQ(avx2.cols, 8);
  EXPECT_EQ(avx2.col_span, 28);
  auto strided = def.build(ops::parse_params(def, {"c=96", "h=28", "w=28", "pad=1", "stride=2"}));
  auto s2 = schedule::fallback_tile(*strided.outputs()[0], *strided.outputs()[0], 8, 16);
  EXPECT_LT(s2.cols, 14);
  EXPECT_EQ(s2.col_span, 14);
  EXPECT_EQ(avx512.col_span, 0);
  // The schedule unrolls the taps of the tile's local stage.
  auto dag = def.build(ops::parse_params(def, {"c=96", "h=28", "w=28", "pad=1"}));
  schedule::FallbackOptions fo = avx2_fallback();
  std::string lowered = schedule::lower(schedule::fallback_schedule(dag, fo).state(), "k").str();
  EXPECT_EQ(lowered.find("for rh"), std::string::npos) << lowered;
}

// With 16 registers a depthwise conv's rows tile reads its padded window from a block filled
// per tile: the padding stage sits inside the parallel loop, and the unrolled taps load
// from it without border tests (stride 2: every other element of the block).
TEST(Fallback, DepthwisePaddingIsFilledPerTile) {
  auto& def = ops::find_op("depthwise_conv2d");
  for (const char* stride : {"1", "2"}) {
    auto dag = def.build(ops::parse_params(def, {"c=32", "h=56", "w=56", "pad=1", "bias=1",
                                                 std::string("stride=") + stride}));
    schedule::FallbackOptions fo = avx2_fallback();
    auto s = schedule::fallback_schedule(dag, fo);
    const auto& pad = s.state().stage("depthwise_conv2d_pad");
    EXPECT_EQ(pad.loc, schedule::Location::At) << "stride " << stride;
    std::string lowered = schedule::lower(s.state(), "k").str();
    EXPECT_NE(lowered.find("allocate depthwise_conv2d_pad["), std::string::npos) << lowered;
    EXPECT_NE(lowered.find("] local"), std::string::npos) << lowered;
    // No border tests in the taps: the block's rows (whole padded input rows) are cut at the
    // border into zero stores and a plain copy, and the taps load from the block. Stride 2:
    // one copy loop fills both column parities (its body two plain copies), the pairs at the
    // row's ends keep their tests.
    std::istringstream in(lowered);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    auto fills = [](const std::string& line) {
      return line.find("depthwise_conv2d_pad[") == line.find_first_not_of(' ');
    };
    auto copies = [&](const std::string& line) {
      return fills(line) && line.find("= data[") != std::string::npos;
    };
    int copy_lines = 0, tested = 0, both_parities = 0;
    for (size_t i = 0; i < lines.size(); ++i) {
      copy_lines += copies(lines[i]);
      if (lines[i].find("if_then_else") != std::string::npos) {
        EXPECT_TRUE(fills(lines[i])) << lines[i];
        ++tested;
      }
      both_parities += i + 2 < lines.size() && lines[i].find("for ") != std::string::npos &&
                       copies(lines[i + 1]) && copies(lines[i + 2]);
    }
    EXPECT_GE(copy_lines, 1) << lowered;
    // The block keeps each parity's columns contiguous for the taps' vector loads.
    std::regex tap(R"(depthwise_conv2d_pad\[ramp\([^,]*, (\d+), 8\))");
    int taps = 0;
    for (std::sregex_iterator it(lowered.begin(), lowered.end(), tap), e; it != e; ++it, ++taps)
      EXPECT_EQ((*it)[1].str(), "1") << it->str();
    EXPECT_GE(taps, 9) << lowered;
    EXPECT_EQ(both_parities, std::string(stride) == "2" ? 1 : 0) << lowered;
    EXPECT_LE(tested, std::string(stride) == "2" ? 3 : 0) << lowered;
  }
  // With 32 registers (channels x pixels tile) the padding stays inlined.
  auto dag = def.build(ops::parse_params(def, {"c=32", "h=56", "w=56", "pad=1"}));
  schedule::FallbackOptions fo;
  fo.vector_lanes = 16;
  fo.vector_registers = 32;
  EXPECT_EQ(schedule::fallback_schedule(dag, fo).state().stage("depthwise_conv2d_pad").loc,
            schedule::Location::Inline);
}

// A float max pool reads its input padded with -inf by a stage of its own, which the
// fallback fills per tile of output rows as it does a depthwise conv's (16 registers): the
// stride-2 taps then load from the block without border tests.
TEST(Fallback, MaxPoolPaddingIsFilledPerTile) {
  auto& def = ops::find_op("max_pool2d");
  auto dag = def.build(ops::parse_params(def, {"c=16", "h=112", "w=112", "kernel=3", "stride=2", "pad=1"}));
  ASSERT_EQ(dag.outputs()[0]->tag, "pool");
  const te::OperationNode& pool = *dag.outputs()[0];
  EXPECT_TRUE(schedule::depthwise_row_tile(pool, 16));
  EXPECT_FALSE(schedule::depthwise_row_tile(pool, 32));
  schedule::FallbackOptions fo = avx2_fallback();
  auto s = schedule::fallback_schedule(dag, fo);
  EXPECT_EQ(s.state().stage("max_pool2d_pad").loc, schedule::Location::At);
  std::string lowered = schedule::lower(s.state(), "k").str();
  EXPECT_NE(lowered.find("-inf"), std::string::npos) << lowered;
  std::istringstream lines(lowered);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("if_then_else") != std::string::npos) {
      EXPECT_EQ(line.find("max_pool2d_pad["), line.find_first_not_of(' ')) << line;
    }
  }
  // Average pools keep their tile and their border tests inside the window.
  auto& avg = ops::find_op("avg_pool2d");
  auto adag = avg.build(ops::parse_params(avg, {"c=16", "h=112", "w=112", "kernel=3", "stride=2", "pad=1"}));
  auto as = schedule::fallback_schedule(adag, fo);
  for (auto& st : as.state().stages()) EXPECT_NE(st.op->tag, "pad") << st.name();
}

// With 32 vector registers padding is inlined into a conv with a window of at most 3x3 and
// into a packed conv of any window (its input is a broadcast scalar load); an unpacked 7x7
// conv keeps the pass. With 16 (AVX2) every conv but a depthwise one keeps it.
TEST(Fallback, PaddingInlinedUnlessAWideWindowIsVectorizedAlongRows) {
  auto pad_inlined = [](const std::string& k, const std::string& wblock, int registers = 32) {
    auto& def = ops::find_op("conv2d");
    auto dag = def.build(ops::parse_params(
        def, {"c=3", "h=32", "w=32", "k=32", "kh=" + k, "kw=" + k, "stride=2", "pad=1", "wblock=" + wblock}));
    schedule::FallbackOptions fo;
    fo.vector_lanes = 16;
    fo.vector_registers = registers;
    auto s = schedule::fallback_schedule(dag, fo);
    return s.state().stage("conv2d_pad").loc == schedule::Location::Inline;
  };
  EXPECT_TRUE(pad_inlined("3", "0"));
  EXPECT_TRUE(pad_inlined("3", "16"));
  EXPECT_FALSE(pad_inlined("7", "0"));
  EXPECT_TRUE(pad_inlined("7", "16"));
  EXPECT_FALSE(pad_inlined("3", "0", 16));
  EXPECT_FALSE(pad_inlined("3", "16", 16));
  EXPECT_FALSE(pad_inlined("7", "16", 16));
}

// An injective stage whose last axis does not vectorize keeps that axis a serial loop of its
// own when it is long (a padded 58-wide row: no division per element); a short one is fused.
TEST(Fallback, UnvectorizedRowsStaySerialLoops) {
  auto loops = [](const std::string& w) {
    auto& def = ops::find_op("conv2d");
    auto dag = def.build(ops::parse_params(def, {"c=4", "h=8", "w=" + w, "k=16", "pad=1", "wblock=16"}));
    schedule::FallbackOptions fo = avx2_fallback();
    auto s = schedule::fallback_schedule(dag, fo);
    const auto& pad = s.state().stage("conv2d_pad");
    EXPECT_EQ(pad.loc, schedule::Location::Root);
    return pad.leaves.size();
  };
  EXPECT_EQ(loops("56"), 2u);  // 58 wide: [c, h] parallel, the row serial
  EXPECT_EQ(loops("1"), 1u);   // 3 wide: all fused
}

// A dense product of at most 4 rows (B stored [n, k]) is dot products vectorized along k
// (rfactor), not a register tile, which would gather B; at 8 rows the tile stays.
TEST(Fallback, FewRowsOfADenseProductAreDotProducts) {
  auto has_rfactor = [](const std::string& m) {
    auto& def = ops::find_op("dense");
    auto dag = def.build(ops::parse_params(def, {"m=" + m, "n=64", "k=512"}));
    schedule::FallbackOptions fo;
    fo.vector_lanes = 16;
    return schedule::fallback_schedule(dag, fo).state().has_stage("dense.rf");
  };
  EXPECT_TRUE(has_rfactor("1"));
  EXPECT_TRUE(has_rfactor("4"));
  EXPECT_FALSE(has_rfactor("8"));
}

// Softmax's exp is read by the sum and by the division: it is computed once (a stage of
// its own), not inlined into both readers.
TEST(Fallback, ExpReadTwiceIsComputedOnce) {
  auto& def = ops::find_op("softmax");
  auto dag = def.build(ops::parse_params(def, {"shape=4x64"}));
  schedule::FallbackOptions fo;
  fo.vector_lanes = 16;
  auto s = schedule::fallback_schedule(dag, fo);
  EXPECT_NE(s.state().stage("softmax_exp").loc, schedule::Location::Inline);
  EXPECT_EQ(s.state().consumers("softmax_exp").size(), 2u);
}

// A global pool sums each plane in partial sums of one vector along its rows (a divisor of
// the row: 14 lanes for 56 or 14, 7 for 7) rather than in one running sum.
TEST(Fallback, GlobalPoolsSumPlanesInVectorsAlongTheRows) {
  auto& def = ops::find_op("global_avg_pool");
  for (auto [w, lanes] : {std::pair{"56", "14"}, {"14", "14"}, {"7", "7"}, {"64", "16"}}) {
    auto dag = def.build(ops::parse_params(def, {"c=8", std::string("h=") + w, std::string("w=") + w}));
    schedule::FallbackOptions fo;
    fo.vector_lanes = 16;
    std::string lowered = schedule::lower(schedule::fallback_schedule(dag, fo).state(), "k").str();
    EXPECT_NE(lowered.find(std::string("rf[ramp(0, 1, ") + lanes + ")] = "), std::string::npos) << lowered;
  }
}

// Rows no vector divides (ViT's 197 attention scores): softmax's reductions in whole vectors,
// the last masked, and its exp and division as 12 vectors of 16 and one of 5 (they ran
// scalar, exp through libm: 1.50 -> 0.31 ms for 12 heads).
TEST(Fallback, SoftmaxOverRowsNoVectorDividesIsVectorized) {
  auto& def = ops::find_op("softmax");
  auto dag = def.build(ops::parse_params(def, {"shape=4x197"}));
  schedule::FallbackOptions fo;
  fo.vector_lanes = 16;
  std::string lowered = schedule::lower(schedule::fallback_schedule(dag, fo).state(), "k").str();
  EXPECT_NE(lowered.find("softmax_max.rf[ramp(0, 1, 16)]"), std::string::npos) << lowered;
  EXPECT_NE(lowered.find("softmax_sum.rf[ramp(0, 1, 16)]"), std::string::npos) << lowered;
  EXPECT_NE(lowered.find(", 1, 16)] = exp((x[ramp("), std::string::npos) << lowered;
  EXPECT_NE(lowered.find(", 1, 5)] = exp("), std::string::npos) << lowered;
}

// A separable resize's first pass stays a stage of its own (inlined, a 2x upsample would
// compute each of its elements again for the 4 outputs reading it), vectorized and parallel.
TEST(Fallback, ResizePassesAreComputedOnce) {
  te::Tensor x = te::placeholder({1, 8, 14, 14}, te::DataType::f32(), "x");
  ops::ResizeAttrs a;
  a.mode = ops::ResizeAttrs::Mode::Linear;
  a.scales = {1, 1, 8, 8};
  te::Tensor y = ops::resize(x, {1, 8, 112, 112}, a, "up");
  auto s = schedule::fallback_schedule(te::ComputeDAG({x}, {y}), schedule::FallbackOptions{});
  ASSERT_TRUE(s.state().has_stage("up_axis3"));
  const auto& pass = s.state().stage("up_axis3");
  EXPECT_EQ(pass.loc, schedule::Location::Root);
  bool parallel = false;
  for (int id : pass.leaves) parallel |= pass.iters[size_t(id)].ann == schedule::Annotation::Parallel;
  EXPECT_TRUE(parallel);
}

// A whole-tensor reduction long in all but short along its last axis (DynamicQuantizeLinear's
// min and max of a [128, 256] activation) is computed as vector partials across the threads;
// it ran as one serial scalar chain (0.14 ms). A short one stays serial.
TEST(Fallback, WholeTensorReductionOfShortRowsIsSplitIntoPartials) {
  auto& def = ops::find_op("reduce_max");
  for (auto [shape, split] : {std::pair{"128x256", true}, {"8x256", false}}) {
    auto dag = def.build(ops::parse_params(def, {std::string("shape=") + shape, "axes=0,1"}));
    schedule::FallbackOptions fo;
    fo.vector_lanes = 16;
    std::string lowered = schedule::lower(schedule::fallback_schedule(dag, fo).state(), "k").str();
    EXPECT_EQ(lowered.find("parallel") != std::string::npos, split) << shape << "\n" << lowered;
    EXPECT_EQ(lowered.find("reduce_max.rf[ramp(") != std::string::npos, split) << shape << "\n" << lowered;
  }
}
