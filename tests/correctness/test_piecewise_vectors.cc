// A vector loop across a packed weight's channel blocks (32 output channels over blocks of
// 16) reads contiguous memory only within each block. It must lower to plain vector loads
// of one block each, not to a per-lane gather, and still compute the conv.
#include <gtest/gtest.h>

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

}  // namespace
