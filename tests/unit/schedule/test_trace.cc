#include <gtest/gtest.h>

#include "schedule/schedule.h"
#include "support/error.h"

using namespace tuner;
using namespace tuner::schedule;
using namespace tuner::te;

namespace {

ComputeDAG matmul_relu(int64_t m, int64_t n, int64_t k) {
  Tensor A = placeholder({m, k}, DataType::f32(), "A");
  Tensor B = placeholder({k, n}, DataType::f32(), "B");
  IterVar r = reduce_axis(k, "k");
  Tensor C = compute({m, n}, [&](auto& i) { return sum(A(i[0], r.var) * B(r.var, i[1]), {r}); }, "C", "matmul");
  Tensor D = compute({m, n}, [&](auto& i) { return max(C(i[0], i[1]), Expr(0.0f)); }, "D");
  return ComputeDAG({A, B}, {D});
}

Schedule sampled_schedule(const ComputeDAG& dag, uint64_t seed) {
  Schedule s(dag, seed);
  std::string l = s.cache_write("C");
  s.reverse_compute_inline("D");
  int ti = s.sample_perfect_tile("D", 0, 2, 16);
  int tj = s.sample_perfect_tile("D", 1, 2, 32);
  auto i = s.split_sampled("D", 0, ti);
  auto j = s.split_sampled("D", 1, tj);
  s.reorder("D", {i[0], j[0], i[1], j[1]});
  s.parallel("D", i[0]);
  int loc = s.sample_compute_location(l);
  s.compute_location(l, loc);
  int u = s.sample_categorical({0, 16, 64, 512});
  s.auto_unroll_sampled(l, u);
  return s;
}

}  // namespace

TEST(Trace, JsonRoundTripIsExact) {
  ComputeDAG dag = matmul_relu(64, 48, 32);
  Schedule s = sampled_schedule(dag, 7);
  Json j = s.trace().to_json();
  Trace back = Trace::from_json(Json::parse(j.dump()));
  EXPECT_EQ(back, s.trace());
  EXPECT_EQ(back.to_json().dump(), j.dump());
  EXPECT_EQ(j["version"], Trace::kVersion);
}

TEST(Trace, ReplayIsDeterministic) {
  ComputeDAG dag = matmul_relu(64, 48, 32);
  for (uint64_t seed = 0; seed < 20; ++seed) {
    Schedule s = sampled_schedule(dag, seed);
    Schedule r1 = Schedule::replay(dag, s.trace());
    Schedule r2 = Schedule::replay(dag, Trace::from_json(s.trace().to_json()));
    EXPECT_EQ(r1.state().str(), s.state().str());
    EXPECT_EQ(r2.state().str(), s.state().str());
    EXPECT_EQ(r1.trace(), s.trace());
  }
}

TEST(Trace, SameSeedSameDecisions) {
  ComputeDAG dag = matmul_relu(60, 48, 32);
  EXPECT_EQ(sampled_schedule(dag, 3).trace(), sampled_schedule(dag, 3).trace());
  bool differ = false;
  for (uint64_t seed = 0; seed < 10 && !differ; ++seed)
    differ = !(sampled_schedule(dag, seed).trace() == sampled_schedule(dag, seed + 100).trace());
  EXPECT_TRUE(differ);
}

TEST(Trace, RejectsOtherVersionsAndGarbage) {
  EXPECT_THROW(Trace::from_json(Json::parse(R"({"version": 99, "insts": []})")), UserError);
  EXPECT_THROW(Trace::from_json(Json::parse(R"({"insts": []})")), UserError);
  EXPECT_THROW(Trace::from_json(Json::parse(R"({"version": 1, "insts": [{"kind": "bogus"}]})")), UserError);
  EXPECT_THROW(Trace::from_json(Json::parse(R"({"version": 1, "insts": {"a": {"kind": "split"}}})")), UserError);
  EXPECT_THROW(Trace::from_json(Json::parse(R"({"version": 1, "insts": [{"kind": "split", "src": -5}]})")), UserError);
  EXPECT_THROW(Trace::from_json(Json::parse(R"("fast")")), UserError);
}

TEST(Trace, MutatedDecisionThatDoesNotTileIsRejectedOnReplay) {
  ComputeDAG dag = matmul_relu(64, 48, 32);
  Schedule s = sampled_schedule(dag, 1);
  Trace t = s.trace();
  for (auto& in : t.insts)
    if (in.kind == InstKind::SamplePerfectTile) in.decision[0] += 1;  // product now wrong
  EXPECT_THROW(Schedule::replay(dag, t), ScheduleError);
}

TEST(PerfectTile, ProductsEqualTheExtent) {
  ComputeDAG dag = matmul_relu(96, 48, 32);
  Schedule s(dag, 11);
  for (int k = 0; k < 200; ++k) {
    int h = s.sample_perfect_tile("C", 0, 4, 16);
    int64_t p = 1;
    for (auto f : s.decision(h)) p *= f;
    EXPECT_EQ(p, 96);
    EXPECT_LE(s.decision(h).back(), 16);
  }
}
