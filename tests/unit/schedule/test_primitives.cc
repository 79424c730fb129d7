#include <gtest/gtest.h>

#include "schedule/lower.h"
#include "schedule/schedule.h"

using namespace tuner::schedule;
using namespace tuner::te;

namespace {

ComputeDAG chain() {
  Tensor A = placeholder({16, 20}, DataType::f32(), "A");
  Tensor B = compute({16, 20}, [&](auto& i) { return A(i[0], i[1]) * Expr(2.0f); }, "B");
  IterVar r = reduce_axis(20, "r");
  Tensor C = compute({16}, [&](auto& i) { return sum(B(i[0], r.var), {r}); }, "C");
  return ComputeDAG({A}, {C});
}

}  // namespace

TEST(Primitives, InvalidApplicationsThrowScheduleErrorAndLeaveStateAlone) {
  Schedule s(chain());
  std::string before = s.state().str();
  EXPECT_THROW(s.split("C", 7, {2}), ScheduleError);        // no such loop
  EXPECT_THROW(s.split("C", 0, {0}), ScheduleError);        // factor < 1
  EXPECT_THROW(s.split("nope", 0, {2}), ScheduleError);     // no such stage
  EXPECT_THROW(s.fuse("C", {0, 1}), ScheduleError);         // spatial with reduction
  EXPECT_THROW(s.parallel("C", 1), ScheduleError);          // parallel reduction
  EXPECT_THROW(s.compute_inline("C"), ScheduleError);       // output
  EXPECT_THROW(s.compute_at("C", "B", 0), ScheduleError);   // B does not consume C
  EXPECT_THROW(s.reorder("C", {0}), ScheduleError);         // not a permutation
  EXPECT_THROW(s.rfactor("C", 0, 4), ScheduleError);        // not a reduction axis
  EXPECT_EQ(s.state().str(), before);
  EXPECT_TRUE(s.trace().insts.empty());
}

TEST(Primitives, SplitKeepsOrderAndExtents) {
  Schedule s(chain());
  auto ids = s.split("B", 1, {3, 2});
  const Stage& b = s.state().stage("B");
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_EQ(b.iters[ids[0]].extent, 4);  // ceil(20 / 6)
  EXPECT_EQ(b.iters[ids[1]].extent, 3);
  EXPECT_EQ(b.iters[ids[2]].extent, 2);
  EXPECT_EQ(b.leaves, (std::vector<int>{0, ids[0], ids[1], ids[2]}));
}

TEST(Primitives, ComputeAtGivesALocalBufferOfTheRegion) {
  Schedule s(chain());
  auto c = s.split("C", 0, {4});
  s.compute_at("B", "C", c[0]);
  LoweredFunc f = lower(s.state(), "k");
  std::string ir = f.str();
  // B is computed per 4 rows of C: a local buffer of 4 x 20 elements.
  EXPECT_NE(ir.find("allocate B[float32 x 80] local"), std::string::npos) << ir;
}

TEST(Primitives, ComputeAtRunsTheProducersOuterSplitLevelsOnce) {
  // B's rows split [4, 2] (8 rows per outer step), then B computed per 4 rows of C: its level
  // of 4 runs only as often as the tile needs (twice), not 4 times with half the rows guarded.
  Schedule s(chain());
  auto c = s.split("C", 0, {4});
  s.split("B", 0, {4, 2});
  s.compute_at("B", "C", c[0]);
  std::string ir = lower(s.state(), "k").str();
  EXPECT_EQ(ir.find("if ("), std::string::npos) << ir;
  EXPECT_EQ(ir.find("in [0, 4) {\n      for i.2"), std::string::npos) << ir;  // B's level of 4
}

TEST(Primitives, ComputeAtReadByADataDependentIndexGetsTheWholeTensor) {
  // O reads M at an index loaded from I (a gather): M computed inside O's loop must hold all
  // of M, and no read of I may leak into the region's bounds (it survived lowering before).
  Tensor A = placeholder({4, 8}, DataType::f32(), "A");
  Tensor I = placeholder({1}, DataType::i64(), "I");
  IterVar r = reduce_axis(8, "r");
  Tensor M = compute({4}, [&](auto& i) { return sum(A(i[0], r.var), {r}); }, "M");
  Tensor O = compute({8}, [&](auto& i) { return A(I(make_int(0)), i[0]) + M(I(make_int(0))); }, "O");
  Schedule s(ComputeDAG({A, I}, {O}));
  s.compute_at("M", "O", 0);
  std::string ir;
  ASSERT_NO_THROW(ir = lower(s.state(), "k").str());
  EXPECT_NE(ir.find("allocate M[float32 x 4] local"), std::string::npos) << ir;
}

TEST(Primitives, RfactorAddsAStage) {
  Schedule s(chain());
  std::string rf = s.rfactor("C", 1, 4);
  EXPECT_EQ(rf, "C.rf");
  EXPECT_EQ(s.state().stage("C.rf").op->shape, (std::vector<int64_t>{16, 4}));
}
