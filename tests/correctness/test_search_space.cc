// Schedules drawn from the search space compute the reference result (the rules, mutators
// and preset-decision replays must never make wrong code).
#include <gtest/gtest.h>

#include <cmath>

#include "kernel_check.h"
#include "ops/elementwise.h"
#include "schedule/analysis.h"
#include "search/mutator.h"
#include "search/space.h"
#include "search/space_gpu.h"

using namespace tuner;
using namespace tuner::testing;

namespace {

// Checks n schedules of the space (and a mutated neighbour of each); returns their traces.
std::vector<schedule::Trace> check_space(const OpCase& c, int n) {
  std::vector<schedule::Trace> traces;
  search::SpaceOptions o = search::space_options_for(host_target());
  codegen::CompileOptions opts;
  opts.build.opt_level = 1;
  auto tile = search::make_tile_size_mutator();
  Rng rng(1);
  for (int i = 0; i < n; ++i) {
    auto s = search::generate_schedule(c.dag, o, 100 + i);
    EXPECT_EQ(check_schedule(c, s.state(), 1e-4, 1e-4, opts), "") << c.str() << "\n" << s.trace().pretty();
    traces.push_back(s.trace());
    // A mutated neighbour too.
    auto d = search::decisions_of(s.trace());
    if (tile->mutate(s.trace(), d, rng)) {
      auto m = search::generate_schedule(c.dag, o, 200 + i, &d);
      EXPECT_EQ(check_schedule(c, m.state(), 1e-4, 1e-4, opts), "") << c.str() << "\n" << m.trace().pretty();
    }
  }
  return traces;
}

// How many traces chose 1 at their first binary categorical choice ({0, 1}).
int ones_at_first_binary_choice(const std::vector<schedule::Trace>& traces) {
  int ones = 0;
  for (const auto& t : traces)
    for (const auto& i : t.insts)
      if (i.kind == schedule::InstKind::SampleCategorical && i.args == std::vector<int64_t>{0, 1}) {
        ones += i.decision.at(0) == 1;
        break;
      }
  return ones;
}

}  // namespace

// A packed stride-2 conv with SiLU after it: the samples that store the tile transposed
// compute the SiLU in the tile's layout first (place_epilogue_in_tile_layout).
TEST(SearchSpace, PackedConvWithSilu) {
  OpCase c("conv2d", {"c=3", "h=30", "w=30", "k=32", "stride=2", "pad=1", "wblock=32"});
  c.dag = te::ComputeDAG(c.dag.inputs(), {ops::silu(c.dag.outputs()[0])});
  for (int64_t i = 0; i < c.expected[0].num_elements(); ++i) {
    double v = c.expected[0].get(i);
    c.expected[0].set(i, v / (1 + std::exp(-v)));
  }
  check_space(c, 12);
}

// Rows no vector divides (197 = 12 x 16 + 5): the elementwise stages sample tiles of the row
// rounded up to whole vectors, the reductions masked last vectors.
TEST(SearchSpace, SoftmaxOverRowsNoVectorDivides) { check_space(OpCase("softmax", {"shape=6x197"}), 12); }

TEST(SearchSpace, MatmulWithEpilogue) { check_space(OpCase("dense", {"m=24", "n=40", "k=33"}), 15); }
TEST(SearchSpace, Conv2d) {
  check_space(OpCase("conv2d", {"c=8", "h=14", "w=14", "k=16", "pad=1", "bias=1"}), 15);
}
// Tall enough, and light enough in weights, that threads split its rows (S0 starts with oh).
TEST(SearchSpace, Conv2dRowsSplitAmongThreads) {
  OpCase c("conv2d", {"n=2", "c=4", "h=28", "w=10", "k=8", "kh=1", "kw=1", "bias=1"});
  int rows = 0;
  for (auto& op : c.dag.ops()) rows += schedule::split_rows_among_threads(*op);
  ASSERT_EQ(rows, 1) << "the conv should split its rows among threads";
  check_space(c, 10);
  check_space(OpCase("conv2d", {"c=4", "h=30", "w=12", "k=16", "pad=1", "wblock=8"}), 8);
}
// Dilated taps that read only padding on border rows: clip_guarded_reduction_loops skips
// them in whatever nest a schedule makes.
TEST(SearchSpace, Conv2dDilatedPastTheBorder) {
  check_space(OpCase("conv2d", {"c=8", "h=9", "w=11", "k=16", "pad=5", "dilation=5", "wblock=16"}), 12);
  check_space(OpCase("conv2d", {"c=4", "h=6", "w=6", "k=8", "pad=7", "dilation=7", "bias=1"}), 8);
}
TEST(SearchSpace, Conv2dPackedWeight) {
  auto traces = check_space(OpCase("conv2d", {"c=8", "h=14", "w=14", "k=32", "pad=1", "wblock=16"}), 10);
  // Both ways of storing the tile were drawn: channels in vectors, or rows.
  int rows_out = ones_at_first_binary_choice(traces);
  EXPECT_GT(rows_out, 0);
  EXPECT_LT(rows_out, 10);
}
// Grouped, one block per group: tiles of several blocks read several groups' inputs.
TEST(SearchSpace, GroupedConv2dPackedWeight) {
  check_space(OpCase("conv2d", {"c=32", "h=14", "w=14", "k=64", "pad=1", "groups=4", "wblock=16"}), 10);
}
TEST(SearchSpace, Conv2d1x1PixelsAsOneAxis) {
  auto traces = check_space(OpCase("conv2d", {"c=8", "h=6", "w=12", "k=16", "kh=1", "kw=1"}), 10);
  // Both tilings were drawn: rows and columns apart, or the pixels as one axis.
  int joined = ones_at_first_binary_choice(traces);
  EXPECT_GT(joined, 0);
  EXPECT_LT(joined, 10);
}
// Rows of three vectors: the space samples tiles of two vectors with a partial last block.
TEST(SearchSpace, Conv2d1x1RowsOfThreeVectors) {
  std::string w = "w=" + std::to_string(3 * host_target().vector_lanes());
  auto traces = check_space(OpCase("conv2d", {"c=8", "h=4", w, "k=12", "kh=1", "kw=1"}), 8);
  int padded = 0;  // sample_perfect_tile over the padded extent (its last argument)
  for (const auto& t : traces)
    for (const auto& i : t.insts)
      padded += i.kind == schedule::InstKind::SamplePerfectTile && i.args.size() == 4 &&
                i.args[3] == 4 * host_target().vector_lanes();
  EXPECT_GT(padded, 0);
}
TEST(SearchSpace, DepthwiseConv2d) {
  check_space(OpCase("depthwise_conv2d", {"c=16", "h=14", "w=14", "stride=2", "pad=1", "bias=1"}),
              10);
}
// Output rows of 36 and 28 columns (not whole vectors of 8 or 16 lanes): the space tiles them
// either by their divisors or as whole vectors with a partial last block (the first binary
// choice, sampled both ways).
TEST(SearchSpace, DepthwiseConv2dPartialLastVector) {
  auto a = check_space(OpCase("depthwise_conv2d", {"c=4", "h=36", "w=36", "pad=1", "bias=1"}), 12);
  auto b = check_space(OpCase("depthwise_conv2d", {"c=4", "h=56", "w=56", "stride=2", "pad=1"}), 12);
  a.insert(a.end(), b.begin(), b.end());
  int partial = ones_at_first_binary_choice(a);
  EXPECT_GT(partial, 0);
  EXPECT_LT(partial, int(a.size()));
}
TEST(SearchSpace, Softmax) { check_space(OpCase("softmax", {"shape=6x200"}), 15); }
// Windowed pools are tiled like depthwise convs (vector accumulators over the output width).
TEST(SearchSpace, MaxPoolPaddedStrided) {
  check_space(OpCase("max_pool2d", {"c=8", "h=17", "w=17", "kernel=3", "stride=2", "pad=1"}), 10);
}
TEST(SearchSpace, AvgPoolCeilMode) {
  check_space(OpCase("avg_pool2d", {"c=4", "h=7", "w=8", "kernel=2", "stride=2", "ceil_mode=1",
                                    "count_include_pad=1"}),
              10);
}
TEST(SearchSpace, GlobalPool) { check_space(OpCase("global_avg_pool", {"c=4", "h=20", "w=20"}), 10); }
// Winograd in one kernel (rule_winograd): block rows that leave a partial last block, every
// register tile, with a bias; batch 2 so blocks cross images.
TEST(SearchSpace, WinogradConv) {
  check_space(OpCase("winograd_conv", {"n=2", "c=16", "h=20", "w=12", "k=32", "bias=1"}), 12);
}
