#include <gtest/gtest.h>

#include <set>

#include "compile/compile_model.h"
#include "ops/elementwise.h"
#include "ops/registry.h"
#include "schedule/fallback.h"
#include "schedule/lower.h"
#include "search/mutator.h"
#include "search/space.h"
#include "search/space_gpu.h"

using namespace tuner;
using namespace tuner::search;

namespace {

// AVX2's vector unit: 8 float lanes, 16 registers.
SpaceOptions avx2_space(SpaceOptions o) {
  o.vector_lanes = 8;
  o.vector_registers = 16;
  return o;
}
schedule::FallbackOptions avx2_fallback() {
  schedule::FallbackOptions fo;
  fo.vector_lanes = 8;
  fo.vector_registers = 16;
  return fo;
}

// A small instance of every op (the shape sets of the correctness tests, first of each).
std::vector<std::string> small_params(const ops::OpDef& d) {
  for (auto& p : d.params)
    if (p.name == "shapes") return {"shapes=2x3,2x5", "axis=1"};
  std::vector<std::string> out;
  std::set<std::string> names;
  for (auto& p : d.params) names.insert(p.name);
  auto set = [&](const char* k, const char* v) {
    if (names.count(k)) out.push_back(std::string(k) + "=" + v);
  };
  if (d.name == "where") return {"cond=5x7", "a=5x7", "b=7"};
  if (d.name == "gather") return {"shape=10x7", "indices=5"};
  if (d.name == "slice") return {"shape=10x20", "starts=1,2", "ends=8,19"};
  if (d.name == "transpose") return {"shape=5x7", "perm=1,0"};
  if (d.name == "reshape") return {"shape=5x6", "to=6,5"};
  if (d.name == "pad") return {"shape=5x7", "pads=1,2,3,0"};
  set("shape", "6x35");
  set("a", "6x35");
  set("b", "35");
  set("m", "24");
  set("n", "40");
  set("k", "16");
  set("c", "8");
  set("h", "12");
  set("w", "12");
  return out;
}

}  // namespace

TEST(Space, RulesGiveValidTracesForEveryOp) {
  SpaceOptions o;
  for (auto& def : ops::op_registry()) {
    auto dag = def.build(ops::parse_params(def, small_params(def)));
    for (uint64_t seed = 0; seed < 10; ++seed) {
      schedule::Schedule s = generate_schedule(dag, o, seed);
      // Valid: replays to the same state and lowers (lowering verifies its output).
      auto r = schedule::Schedule::replay(dag, s.trace());
      ASSERT_EQ(r.state().str(), s.state().str()) << def.name;
      EXPECT_NO_THROW(schedule::lower(s.state(), "k")) << def.name << "\n" << s.trace().pretty();
    }
  }
}

TEST(Space, PresetDecisionsRebuildTheSameSchedule) {
  auto& def = ops::find_op("conv2d");
  auto dag = def.build(ops::parse_params(def, {"c=16", "h=14", "w=14", "k=32", "pad=1"}));
  SpaceOptions o;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    auto s = generate_schedule(dag, o, seed);
    Decisions d = decisions_of(s.trace());
    auto again = generate_schedule(dag, o, seed + 1000, &d);
    EXPECT_EQ(again.trace(), s.trace());
  }
}

TEST(Mutators, TileSizeKeepsProductsAndExplores) {
  auto& def = ops::find_op("matmul");
  auto dag = def.build(ops::parse_params(def, {"m=96", "n=480", "k=64"}));
  SpaceOptions o;
  auto s = generate_schedule(dag, o, 1);
  auto tiles = sampling_of(s.trace(), schedule::InstKind::SamplePerfectTile);
  ASSERT_FALSE(tiles.empty());
  auto m = make_tile_size_mutator();
  Rng rng(5);
  Decisions d = decisions_of(s.trace());
  std::set<Decisions> distinct;
  for (int i = 0; i < 1000; ++i) {
    Decisions next = d;
    ASSERT_TRUE(m->mutate(s.trace(), next, rng));
    for (auto [in, k] : tiles) {
      int64_t prod = 1;
      for (auto f : next[k]) prod *= f;
      const auto& st = s.state().stage(in->stage);
      (void)st;
      int64_t extent = 1;
      for (auto f : d[k]) extent *= f;
      EXPECT_EQ(prod, extent);
      EXPECT_LE(next[k].back(), in->args[2]);
    }
    distinct.insert(next);
    d = next;
  }
  EXPECT_GT(distinct.size(), 200u);
}

TEST(Space, LikeFallbackGivesValidTracesForEveryOp) {
  SpaceOptions o;
  o.like_fallback = true;
  for (auto& def : ops::op_registry()) {
    auto dag = def.build(ops::parse_params(def, small_params(def)));
    schedule::Schedule s = generate_schedule(dag, o, 1);
    auto r = schedule::Schedule::replay(dag, s.trace());
    ASSERT_EQ(r.state().str(), s.state().str()) << def.name;
    EXPECT_NO_THROW(schedule::lower(s.state(), "k")) << def.name << "\n" << s.trace().pretty();
  }
}

// The search's starting point takes the fallback's register tile: a packed 3x3 conv over
// 56x56 keeps 32 output channels x 8 pixels in registers, its rows split among threads in
// blocks of 8, the reductions outside the tile, the tile stored transposed (pixels as
// vectors) and the padding inlined; matmul unrolls 4
// iterations of k around its tile.
TEST(Space, LikeFallbackTakesTheFallbacksTile) {
  SpaceOptions o;
  o.like_fallback = true;
  auto decisions = [&](const char* op, std::vector<std::string> params) {
    auto& def = ops::find_op(op);
    auto dag = def.build(ops::parse_params(def, params));
    Decisions a = decisions_of(generate_schedule(dag, o, 1).trace());
    EXPECT_EQ(a, decisions_of(generate_schedule(dag, o, 2).trace())) << op << ": not deterministic";
    return a;
  };
  Decisions conv = decisions("conv2d", {"c=64", "h=56", "w=56", "k=64", "pad=1", "wblock=32"});
  Decisions want_conv = {{1, 1, 1, 1}, {2, 1, 1, 32}, {7, 8, 1, 1}, {1, 7, 1, 8}, {64, 1},
                         {3, 1},       {3, 1},        {1},          {0},          {-2}};
  EXPECT_EQ(conv, want_conv);
  Decisions mm = decisions("matmul", {"m=256", "n=256", "k=256"});
  Decisions want_mm = {{32, 1, 1, 8}, {1, 8, 1, 32}, {64, 4}, {0}};
  EXPECT_EQ(mm, want_mm);
  // A matrix-vector product: too few row tiles for the threads, so the column blocks are
  // the parallel loop, 40 columns (5 vectors) each, which divide the 1000 (no partial block).
  Decisions mv = decisions("matmul", {"m=1", "n=1000", "k=1280"});
  Decisions want_mv = {{1, 1, 1, 1}, {0}, {25, 1, 1, 40}, {320, 4}, {0}};
  EXPECT_EQ(mv, want_mv);
  // 56 columns: 4 blocks of 16, the last partial (the padded extent 64).
  Decisions dw = decisions("depthwise_conv2d", {"c=96", "h=112", "w=112", "stride=2", "pad=1"});
  ASSERT_GE(dw.size(), 5u);
  EXPECT_EQ(dw[3], (std::vector<int64_t>{1})) << "the partial-block choice";
  EXPECT_EQ(dw[4], (std::vector<int64_t>{1, 4, 1, 16}));
  // A plain 1x1 conv over 56 columns with AVX2's 8 lanes: tiles of two vectors (16 columns,
  // the last block one vector) and 6 of the 24 output channels, as the fallback's.
  SpaceOptions avx2 = avx2_space(o);
  auto& pw = ops::find_op("conv2d");
  auto pdag = pw.build(ops::parse_params(pw, {"c=96", "h=56", "w=56", "k=24", "kh=1", "kw=1"}));
  // Pixels not joined, 4 blocks of 6 channels, threads over 8 blocks of 7 rows, the partial
  // last block chosen, 56 columns as 4 x 16 (padded to 64), the reduction outside the tile.
  Decisions want_pw = {{0}, {1, 1, 1, 1}, {4, 1, 1, 6}, {8, 7, 1, 1}, {1}, {1, 4, 1, 16},
                       {96, 1}, {1, 1}, {1, 1}, {0}};
  EXPECT_EQ(decisions_of(generate_schedule(pdag, avx2, 1).trace()), want_pw);
  auto ft = schedule::fallback_tile(*pdag.outputs()[0], *pdag.outputs()[0], 8, 16);
  EXPECT_EQ(ft.cols, 16);
  EXPECT_EQ(ft.rows, 6);
}

// A packed conv's tile stored transposed: a SiLU epilogue is computed in the tile's layout
// first (channel vectors), as the fallback does, in the search's start and in any sample that
// stores the rows out; the traces replay.
TEST(Space, TranscendentalEpilogueOfATransposedTileRunsOnChannelVectors) {
  auto& def = ops::find_op("conv2d");
  auto conv = def.build(ops::parse_params(def, {"c=3", "h=56", "w=56", "k=32", "stride=2", "pad=1", "wblock=32"}));
  te::ComputeDAG dag(conv.inputs(), {ops::silu(conv.outputs()[0])});
  SpaceOptions like;
  like.like_fallback = true;
  schedule::Schedule start = generate_schedule(dag, like, 1);
  std::string lowered = schedule::lower(start.state(), "k").str();
  EXPECT_NE(lowered.find("silu.local[ramp("), std::string::npos) << lowered;
  EXPECT_NE(lowered.find(", 1, 32)] = ("), std::string::npos) << lowered;
  int with_local = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    schedule::Schedule s = generate_schedule(dag, SpaceOptions{}, seed);
    auto r = schedule::Schedule::replay(dag, s.trace());
    ASSERT_EQ(r.state().str(), s.state().str()) << seed;
    with_local += s.state().has_stage("silu.local");
    EXPECT_NO_THROW(schedule::lower(s.state(), "k")) << s.trace().pretty();
  }
  EXPECT_GT(with_local, 0);
  EXPECT_LT(with_local, 40);
}

// The search starts a softmax over 197-wide rows (ViT's scores) as the fallback does: its exp
// as 12 vectors of 16 and one of 5, not a serial row.
TEST(Space, RowsNoVectorDividesStartVectorized) {
  auto& def = ops::find_op("softmax");
  auto dag = def.build(ops::parse_params(def, {"shape=4x197"}));
  SpaceOptions like;
  like.like_fallback = true;
  like.vector_lanes = 16;
  std::string lowered = schedule::lower(generate_schedule(dag, like, 1).state(), "k").str();
  EXPECT_NE(lowered.find(", 1, 5)] = exp("), std::string::npos) << lowered;
  EXPECT_NE(lowered.find(", 1, 16)] = exp("), std::string::npos) << lowered;
}

// With 16 registers the search starts a packed 1x1 conv over a small plane at the fallback's
// tile: 16 channels (S3) over the whole 7x7 plane (S2), four input channels in R1.
TEST(Space, SmallPlanePointwiseStartsAtThePlaneTile) {
  auto& def = ops::find_op("conv2d");
  auto dag = def.build(ops::parse_params(def, {"c=960", "h=7", "w=7", "k=320", "kh=1", "kw=1", "wblock=8"}));
  SpaceOptions like;
  like.like_fallback = true;
  like = avx2_space(like);
  auto start = generate_schedule(dag, like, 1);
  Decisions want = {{1, 1, 1, 1}, {20, 1, 1, 16}, {1, 1, 7, 1}, {1, 1, 7, 1}, {240, 4}, {1, 1}, {1, 1}, {1}, {0}};
  EXPECT_EQ(decisions_of(start.trace()), want);
  std::string lowered = schedule::lower(start.state(), "k").str();
  EXPECT_NE(lowered.find("x 784] local"), std::string::npos) << lowered;
}

// With 16 registers the search starts a packed 3x3 stride-2 conv at the fallback's tile: 2
// output rows x 2 pixels x 16 channels (S3), the rows' thread blocks of 4 (S0, S1).
TEST(Space, StridedPackedConvStartsAtTheFallbacksTile) {
  auto& def = ops::find_op("conv2d");
  auto dag = def.build(ops::parse_params(def, {"c=64", "h=56", "w=56", "k=128", "stride=2", "pad=1", "wblock=8"}));
  SpaceOptions like;
  like.like_fallback = true;
  like = avx2_space(like);
  Decisions d = decisions_of(generate_schedule(dag, like, 1).trace());
  ASSERT_GE(d.size(), 4u);
  EXPECT_EQ(d[1], (std::vector<int64_t>{8, 1, 1, 16}));
  EXPECT_EQ(d[2], (std::vector<int64_t>{7, 2, 1, 2}));
  EXPECT_EQ(d[3], (std::vector<int64_t>{1, 14, 1, 2}));
}

// With 16 registers the search's starting point for a depthwise conv is the fallback's
// rows tile with its taps unrolled; other points sample whether the taps are unrolled.
TEST(Space, DepthwiseStartsAtTheFallbacksRowsTile) {
  auto& def = ops::find_op("depthwise_conv2d");
  auto dag = def.build(ops::parse_params(def, {"c=96", "h=28", "w=28", "pad=1"}));
  SpaceOptions like;
  like.like_fallback = true;
  like = avx2_space(like);
  schedule::FallbackOptions fo = avx2_fallback();
  auto start = generate_schedule(dag, like, 1);
  // Channels outside the tile, 7 rows x 8 columns in it (28 = 3 x 8 + 4: a partial last
  // block), the tile sweeping the whole row's blocks around the taps (whole loops inside
  // them, unrolled), no auto-unroll, the padding filled per tile (at the first loop of the
  // conv's local stage).
  Decisions want = {{1, 1, 1, 1}, {96, 1, 1, 1}, {4, 1, 1, 7}, {1},  {1, 1, 4, 8},
                    {1, 3},       {1, 3},        {1},          {0},  {schedule::kPadPerTile}};
  EXPECT_EQ(decisions_of(start.trace()), want);
  std::string lowered = schedule::lower(start.state(), "k").str();
  EXPECT_EQ(lowered.find("for rh"), std::string::npos) << lowered;
  // The fallback's loops and loads (it names the loops differently: 2-level splits).
  auto count = [](const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
    return n;
  };
  std::string fallback = schedule::lower(schedule::fallback_schedule(dag, fo).state(), "k").str();
  for (const char* what : {"parallel ", "data[", "weight["})
    EXPECT_EQ(count(lowered, what), count(fallback, what)) << what << "\n" << lowered << "\n" << fallback;
  // One loop more: the search's tile zeroes the row's accumulator blocks together, before
  // its (extent-1) outer tap loops; the fallback's zeroes each block before its taps.
  EXPECT_EQ(count(lowered, "for "), count(fallback, "for ") + 1) << lowered << "\n" << fallback;
  SpaceOptions o = like;
  o.like_fallback = false;
  std::set<bool> unrolled;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    std::string l = schedule::lower(generate_schedule(dag, o, seed).state(), "k").str();
    unrolled.insert(l.find("for rh") == std::string::npos);
  }
  EXPECT_EQ(unrolled, (std::set<bool>{false, true}));
}

// A Winograd conv in one kernel: the search's starting point is the fallback's schedule, and
// its other points vary the block rows, the products' register tile and the parts of the
// output channels within their bounds.
TEST(Space, WinogradConvStartsAtTheFallbackAndVariesItsBlocks) {
  auto& def = ops::find_op("winograd_conv");
  auto dag = def.build(ops::parse_params(def, {"c=64", "h=28", "w=28", "k=128"}));
  SpaceOptions like;
  like.like_fallback = true;
  auto start = generate_schedule(dag, like, 1);
  auto fallback = schedule::fallback_schedule(dag);
  EXPECT_EQ(schedule::lower(start.state(), "k").str(), schedule::lower(fallback.state(), "k").str());
  // 7 tile rows of 8 tiles, 128 output channels (8 vectors), U 1.2 MB: the fallback takes the
  // whole image as one block (rows 1, 2, 3, 4, 7), 4 tiles x 4 vectors in registers, and the
  // channels in two parts for the threads.
  EXPECT_EQ(decisions_of(start.trace()), (Decisions{{4}, {2}, {2}, {0}}));  // parts: 2 or 4

  SpaceOptions o;
  std::set<std::string> states;
  std::set<int64_t> rows, tile_p, tile_k, parts;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    auto s = generate_schedule(dag, o, seed);
    auto cats = sampling_of(s.trace(), schedule::InstKind::SampleCategorical);
    ASSERT_EQ(cats.size(), 4u) << s.trace().pretty();
    int64_t r = cats[0].first->args[size_t(cats[0].first->decision[0])];
    int64_t p = cats[1].first->args[size_t(cats[1].first->decision[0])];
    int64_t k = cats[2].first->args[size_t(cats[2].first->decision[0])];
    int64_t kp = cats[3].first->args[size_t(cats[3].first->decision[0])];
    rows.insert(r);
    tile_p.insert(p);
    tile_k.insert(k);
    parts.insert(kp);
    EXPECT_LE(p * k, 24) << "register tile of " << p << " x " << k << " vectors";
    EXPECT_EQ(8 % (k * kp), 0) << kp << " parts of " << k << "-vector tiles";
    EXPECT_GE((7 + r - 1) / r * kp, 2) << r << " rows in " << kp << " parts leave one iteration for two threads";
    if (states.insert(s.state().str()).second) {  // each distinct point lowered once
      EXPECT_NO_THROW(schedule::lower(s.state(), "k")) << s.trace().pretty();
    }
  }
  EXPECT_EQ(rows, (std::set<int64_t>{1, 2, 3, 4, 7}));
  EXPECT_EQ(tile_p, (std::set<int64_t>{1, 2, 4, 8}));
  EXPECT_EQ(tile_k, (std::set<int64_t>{1, 2, 4, 8}));
  EXPECT_EQ(parts, (std::set<int64_t>{1, 2, 4}));
  EXPECT_GT(states.size(), 30u);

  // AVX2 (8 lanes, 16 registers): the fallback's tile is 4 tiles x 2 vectors, and no sampled
  // tile holds more than 12 accumulators.
  SpaceOptions avx2 = avx2_space(like);
  schedule::FallbackOptions fo = avx2_fallback();
  auto start2 = generate_schedule(dag, avx2, 1);
  EXPECT_EQ(schedule::lower(start2.state(), "k").str(),
            schedule::lower(schedule::fallback_schedule(dag, fo).state(), "k").str());
  auto cats2 = sampling_of(start2.trace(), schedule::InstKind::SampleCategorical);
  ASSERT_EQ(cats2.size(), 4u);
  EXPECT_EQ(cats2[1].first->args[size_t(cats2[1].first->decision[0])], 4);
  EXPECT_EQ(cats2[2].first->args[size_t(cats2[2].first->decision[0])], 2);
  avx2.like_fallback = false;
  for (uint64_t seed = 0; seed < 100; ++seed) {
    auto s = generate_schedule(dag, avx2, seed);  // sampling_of points into its trace
    auto c = sampling_of(s.trace(), schedule::InstKind::SampleCategorical);
    ASSERT_EQ(c.size(), 4u);
    int64_t p = c[1].first->args[size_t(c[1].first->decision[0])];
    int64_t k = c[2].first->args[size_t(c[2].first->decision[0])];
    EXPECT_TRUE(k == 1 || p * k <= 12) << p << " x " << k;
  }
}

// A transformed weight that fits a core's L2 (64 -> 64 channels, 0.6 MB) keeps the fallback's
// blocks of tile rows, all channels in one part.
TEST(Space, WinogradFallbackSplitsChannelsOnlyForLargeWeights) {
  auto& def = ops::find_op("winograd_conv");
  auto dag = def.build(ops::parse_params(def, {"c=64", "h=28", "w=28", "k=64"}));
  SpaceOptions like;
  like.like_fallback = true;
  auto start = generate_schedule(dag, like, 1);  // sampling_of points into its trace
  auto cats = sampling_of(start.trace(), schedule::InstKind::SampleCategorical);
  ASSERT_EQ(cats.size(), 4u);
  EXPECT_EQ(cats[0].first->args[size_t(cats[0].first->decision[0])], 2);  // rows: 4 blocks
  EXPECT_EQ(cats[3].first->args[size_t(cats[3].first->decision[0])], 1);  // k parts
}

// The options builders carry the target's SIMD unit: lanes and registers.
TEST(Space, OptionsFollowTheTargetsRegisters) {
  auto zen3 = codegen::Target::parse("llvm -mtriple=x86_64-pc-linux-gnu -mcpu=znver3");
  auto skx = codegen::Target::parse("llvm -mtriple=x86_64-pc-linux-gnu -mcpu=skylake-avx512");
  EXPECT_EQ(space_options_for(zen3).vector_registers, 16);
  EXPECT_EQ(space_options_for(zen3).vector_lanes, 8);
  EXPECT_EQ(space_options_for(skx).vector_registers, 32);
  EXPECT_EQ(compile::pass_options_for(zen3).vector_registers, 16);
  EXPECT_EQ(compile::pass_options_for(zen3).vector_lanes, 8);
  EXPECT_EQ(compile::pass_options_for(skx).vector_registers, 32);
  EXPECT_EQ(compile::pass_options_for(codegen::Target::parse("cuda -arch=sm_80")).vector_lanes, 0);
}
