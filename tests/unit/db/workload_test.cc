#include "db/workload.h"

#include <gtest/gtest.h>

#include "support/error.h"
#include "te/compute_dag.h"
#include "te/tensor.h"
#include "unit/db/db_test_util.h"

namespace tuner::db {

namespace fs = std::filesystem;

namespace {
te::ComputeDAG matmul(int64_t m, int64_t n, int64_t k) {
  auto a = te::placeholder({m, k}, te::DataType::f32(), "A");
  auto b = te::placeholder({k, n}, te::DataType::f32(), "B");
  auto r = te::reduce_axis(k, "k");
  auto c = te::compute(
      {m, n},
      [&](const std::vector<te::Var>& i) { return te::sum(a(i[0], r.var) * b(r.var, i[1]), {r}); },
      "C", "matmul");
  return te::ComputeDAG({a, b}, {c});
}
}  // namespace

TEST(Workload, FromDagTakesIdentityFromTheDag) {
  te::ComputeDAG dag = matmul(32, 48, 16);
  Workload w = Workload::from_dag(dag, "matmul", "M=32 N=48 K=16");
  EXPECT_EQ(w.hash, dag.hash_hex());
  EXPECT_EQ(w.canonical, dag.canonical_text());
  EXPECT_DOUBLE_EQ(w.flops, dag.flops());
  ASSERT_EQ(w.shapes.size(), 3u);
  EXPECT_EQ(w.shapes[0]["name"], "A");
  EXPECT_EQ(w.shapes[2]["shape"], Json::parse("[32, 48]"));
  EXPECT_EQ(w.shapes[2]["dtype"], "float32");
  EXPECT_NO_THROW(check_workload(w));
}

// `tuner db verify` re-hashes stored canonical text: the db's hash must be te's hash.
TEST(Workload, RehashAgreesWithComputeDag) {
  for (auto [m, n, k] : {std::tuple{8, 8, 8}, std::tuple{64, 32, 128}}) {
    te::ComputeDAG dag = matmul(m, n, k);
    EXPECT_EQ(workload_hash_of(dag.canonical_text()), dag.hash_hex());
  }
  EXPECT_NE(matmul(8, 8, 8).hash_hex(), matmul(8, 8, 16).hash_hex());
}

TEST(Workload, CheckRejectsInconsistentWorkloads) {
  Workload w = test::test_workload(0);
  EXPECT_NO_THROW(check_workload(w));
  auto fails = [](Workload bad, const char* what) {
    try {
      check_workload(bad);
      ADD_FAILURE() << "accepted a workload with " << what;
    } catch (const UserError& e) {
      SUCCEED() << e.what();
    }
  };
  Workload bad = w;
  bad.canonical += " ";
  fails(bad, "a canonical text that does not match the hash");
  bad = w;
  bad.hash = "ABCDEF0123456789";
  fails(bad, "an upper-case hash");
  bad = w;
  bad.hash = "abc";
  fails(bad, "a short hash");
  bad = w;
  bad.op = "";
  fails(bad, "no op");
  bad = w;
  bad.flops = -1;
  fails(bad, "negative flops");
  bad = w;
  bad.shapes = Json::object();
  fails(bad, "shapes that are not an array");
}

TEST(Workload, ModelTaskNamesRoundTrip) {
  std::string op = model_task_op("Conv+Add+Relu");
  EXPECT_EQ(op, "model:Conv+Add+Relu");
  ASSERT_TRUE(model_task_members(op));
  EXPECT_EQ(*model_task_members(op), "Conv+Add+Relu");
  EXPECT_FALSE(model_task_members("conv2d"));
  EXPECT_FALSE(model_task_members("mode:Conv"));
  EXPECT_EQ(model_task_params("resnet18", 3), "model=resnet18 task=3");
}

}  // namespace tuner::db
