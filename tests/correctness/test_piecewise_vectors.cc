// A vector loop across a packed weight's channel blocks (32 output channels over blocks of
// 16) reads contiguous memory only within each block. It must lower to plain vector loads
// of one block each, not to a per-lane gather, and still compute the conv.
#include <gtest/gtest.h>

#include <set>

#include "kernel_check.h"
#include "schedule/lower.h"
#include "schedule/schedule.h"
#include "te/functor.h"

using namespace tuner;
using namespace tuner::testing;

namespace {

struct VectorLoads {
  int gathers = 0;           // vector index neither a ramp nor a broadcast
  int contiguous_16 = 0;     // ramp(_, 1, 16) of the weight
};

VectorLoads count_loads(const te::Stmt& body) {
  VectorLoads n;
  te::visit_exprs(body, [&](const te::Expr& e) {
    auto* l = e.as<te::BufferLoadNode>();
    if (!l || l->indices[0].type().is_scalar()) return;
    auto* r = l->indices[0].as<te::RampNode>();
    if (!r && !l->indices[0].as<te::BroadcastNode>()) ++n.gathers;
    if (r && r->lanes == 16 && l->buffer->name == "weight") ++n.contiguous_16;
  });
  return n;
}

TEST(PiecewiseVectors, ChannelsAcrossWeightBlocksLoadWholeBlocks) {
  for (int64_t lanes : {32, 64}) {
    OpCase c("conv2d", {"c=8", "h=5", "w=6", "k=64", "kh=1", "kw=1", "wblock=16"});
    schedule::Schedule s(c.dag);
    // Axes i j k l rc rh rw: the output channels split so that `lanes` of them are innermost.
    auto j = s.split("conv2d", 1, {lanes});
    s.reorder("conv2d", {0, j[0], 2, 3, 4, 5, 6, j[1]});
    s.vectorize("conv2d", j[1]);
    VectorLoads n = count_loads(schedule::lower(s.state(), "k").body);
    EXPECT_EQ(n.gathers, 0) << lanes << " lanes";
    EXPECT_GE(n.contiguous_16, int(lanes / 16)) << lanes << " lanes: no whole-block weight loads";
    EXPECT_EQ(check_schedule(c, s.state(), 1e-4, 1e-5), "") << lanes << " lanes";
  }
}

// Lanes of the stores to `buffer`, and the if-statements, of a lowered body.
void store_lanes_and_ifs(const te::Stmt& s, const std::string& buffer, std::set<int>* lanes, int* ifs) {
  if (!s) return;
  if (auto* q = s.as<te::SeqStmtNode>()) {
    for (auto& x : q->seq) store_lanes_and_ifs(x, buffer, lanes, ifs);
  } else if (auto* f = s.as<te::ForNode>()) {
    store_lanes_and_ifs(f->body, buffer, lanes, ifs);
  } else if (auto* a = s.as<te::AllocateNode>()) {
    store_lanes_and_ifs(a->body, buffer, lanes, ifs);
  } else if (auto* i = s.as<te::IfThenElseNode>()) {
    ++*ifs;
    store_lanes_and_ifs(i->then_case, buffer, lanes, ifs);
    store_lanes_and_ifs(i->else_case, buffer, lanes, ifs);
  } else if (auto* b = s.as<te::BufferStoreNode>(); b && b->buffer->name == buffer) {
    lanes->insert(b->value.type().lanes);
  }
}

// Blocks of 16 over 56 columns in the parallel loop: alone (its last iteration is the partial
// block) or fused after the rows (every 4th iteration is). partition_tails picks the body by
// the loop variable (v < 3, or v % 4 < 3): one if-statement, both bodies vectorized.
TEST(PiecewiseVectors, PartialBlockInAParallelLoop) {
  for (bool fused : {false, true}) {
    OpCase c("abs", {"shape=6x56"});
    schedule::Schedule s(c.dag);
    auto j = s.split("abs", 1, {16});  // [i, j.0, j.1]: 4 blocks, the last 8 wide
    int par = j[0];
    if (fused) par = s.fuse("abs", {0, j[0]});
    else s.reorder("abs", {j[0], 0, j[1]});
    s.parallel("abs", par);
    s.vectorize("abs", j[1]);
    std::set<int> lanes;
    int ifs = 0;
    store_lanes_and_ifs(schedule::lower(s.state(), "k").body, "abs", &lanes, &ifs);
    EXPECT_EQ(lanes, (std::set<int>{8, 16})) << (fused ? "fused" : "alone");
    EXPECT_EQ(ifs, 1) << (fused ? "fused" : "alone");
    EXPECT_EQ(check_schedule(c, s.state(), 0, 0), "") << (fused ? "fused" : "alone");
  }
}

}  // namespace
