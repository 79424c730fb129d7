#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

#include "costmodel/features.h"
#include "ops/registry.h"
#include "schedule/fallback.h"
#include "search/space.h"

using namespace tuner;
using namespace tuner::costmodel;

namespace {

te::ComputeDAG op_dag(const std::string& op, const std::vector<std::string>& p) {
  auto& def = ops::find_op(op);
  return def.build(ops::parse_params(def, p));
}

// matmul tiled (i by 8, j by ji), optionally vectorized.
schedule::Schedule tiled(const te::ComputeDAG& dag, int64_t ji, bool vec) {
  schedule::Schedule s(dag);
  const auto& name = dag.outputs()[0]->name;
  auto i = s.split(name, 0, {8});
  auto j = s.split(name, 1, {ji});
  s.reorder(name, {i[0], j[0], 2, i[1], j[1]});
  if (vec) s.vectorize(name, j[1]);
  return s;
}

}  // namespace

TEST(Features, FixedLengthAndDeterministic) {
  auto dag = op_dag("conv2d", {"c=16", "h=14", "w=14", "k=32", "pad=1"});
  auto s = schedule::fallback_schedule(dag);
  auto a = extract_store_features(s.state());
  auto b = extract_store_features(s.state());
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a, b);
  for (auto& row : a) EXPECT_EQ(row.size(), size_t(kFeaturesPerStore));
}

TEST(Features, InnermostFactorAndVectorizationChangeFeatures) {
  auto dag = op_dag("matmul", {"m=64", "n=64", "k=64"});
  auto f16 = extract_store_features(tiled(dag, 16, true).state());
  auto f32 = extract_store_features(tiled(dag, 32, true).state());
  auto scalar = extract_store_features(tiled(dag, 16, false).state());
  EXPECT_NE(f16, f32);
  EXPECT_NE(f16, scalar);
}

TEST(Features, ExtractionIsFast) {
  auto dag = op_dag("conv2d", {"c=64", "h=56", "w=56", "k=64", "pad=1"});
  search::SpaceOptions o;
  std::vector<double> ms;
  for (int i = 0; i < 30; ++i) {
    auto s = search::generate_schedule(dag, o, i);
    auto t0 = std::chrono::steady_clock::now();
    auto f = extract_store_features(s.state());
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    EXPECT_FALSE(f.empty());
  }
  std::sort(ms.begin(), ms.end());
  std::printf("feature extraction, conv2d candidates: median %.3f ms\n", ms[ms.size() / 2]);
  EXPECT_LT(ms[ms.size() / 2], 5.0);  // issue target is 1 ms; generous bound for a loaded machine
}

// The last two features count the iterations whose working set fits an L1- and an L2-sized
// cache: a matmul blocked into 16x16x16 tiles keeps 4,096 iterations in L1; the untiled
// i, j, k nest only its innermost k loop (512), the j loop around it walking all 1 MiB of B.
TEST(Features, CacheFitSeesBlocking) {
  auto dag = op_dag("matmul", {"m=512", "n=512", "k=512"});
  const auto& name = dag.outputs()[0]->name;
  schedule::Schedule plain(dag);
  schedule::Schedule blocked(dag);
  auto i = blocked.split(name, 0, {16});
  auto j = blocked.split(name, 1, {16});
  auto k = blocked.split(name, 2, {16});
  blocked.reorder(name, {i[0], j[0], k[0], i[1], k[1], j[1]});
  auto fp = extract_store_features(plain.state()).back();
  auto fb = extract_store_features(blocked.state()).back();
  const int l1 = kFeaturesPerStore - 2, l2 = kFeaturesPerStore - 1;
  EXPECT_NEAR(fp[l1], std::log2(1 + 512.0), 1e-3);  // log2(1 + iterations)
  EXPECT_NEAR(fb[l1], std::log2(1 + 4096.0), 1e-3);
  EXPECT_GT(fb[l2], fp[l2]);
}
