#include <gtest/gtest.h>

#include "te/compute_dag.h"

using namespace tuner::te;

namespace {

ComputeDAG matmul(int64_t m, int64_t n, int64_t k, const char* a = "A", const char* kname = "k",
                  DataType t = DataType::f32()) {
  Tensor A = placeholder({m, k}, t, a);
  Tensor B = placeholder({k, n}, t, "B");
  IterVar r = reduce_axis(k, kname);
  Tensor C = compute({m, n}, [&](const std::vector<Var>& i) { return sum(A(i[0], r.var) * B(r.var, i[1]), {r}); },
                     "C", "matmul");
  return ComputeDAG({A, B}, {C});
}

}  // namespace

TEST(ComputeDAG, SameStructureOtherNamesHashesEqual) {
  ComputeDAG a = matmul(64, 32, 16, "A", "k");
  ComputeDAG b = matmul(64, 32, 16, "X", "red");
  EXPECT_EQ(a.structural_hash(), b.structural_hash());
  EXPECT_TRUE(a.structural_equal(b));
  EXPECT_EQ(a.hash_hex().size(), 16u);
}

TEST(ComputeDAG, OtherShapesOrDtypesHashDifferently) {
  ComputeDAG a = matmul(64, 32, 16);
  EXPECT_NE(a.structural_hash(), matmul(64, 32, 17).structural_hash());
  EXPECT_NE(a.structural_hash(), matmul(32, 64, 16).structural_hash());
  EXPECT_NE(a.structural_hash(), matmul(64, 32, 16, "A", "k", DataType::f16()).structural_hash());
}

TEST(ComputeDAG, HashIsStableAcrossRuns) {
  // The hash is FNV-1a of the canonical text: fixed for a fixed DAG on every machine.
  ComputeDAG a = matmul(4, 4, 4);
  EXPECT_EQ(a.canonical_text(), matmul(4, 4, 4).canonical_text());
  EXPECT_NE(a.canonical_text().find("sum"), std::string::npos);
}

TEST(ComputeDAG, FlopsCountMultiplyAddAsTwo) {
  EXPECT_DOUBLE_EQ(matmul(8, 4, 2).flops(), 2.0 * 8 * 4 * 2);
}

TEST(ComputeDAG, TopologicalOrderAndConsumers) {
  Tensor A = placeholder({8}, DataType::f32(), "A");
  Tensor B = compute({8}, [&](auto& i) { return A(i[0]) + Expr(1.0f); }, "B");
  Tensor C = compute({8}, [&](auto& i) { return B(i[0]) * B(i[0]); }, "C");
  ComputeDAG dag({A}, {C});
  ASSERT_EQ(dag.ops().size(), 3u);
  EXPECT_EQ(dag.ops()[1]->name, "B");
  EXPECT_EQ(dag.consumers(B.get()).size(), 1u);
  EXPECT_TRUE(dag.is_output(C.get()));
}

TEST(ShapeStr, LongShapesStayOneShortLine) {
  EXPECT_EQ(shape_str({}), "scalar");
  EXPECT_EQ(shape_str({1, 3, 224, 224}), "1x3x224x224");
  EXPECT_EQ(shape_str(std::vector<int64_t>(10, 2)), "2x2x2x2x2x2x2x2x2x2");
  EXPECT_EQ(shape_str(std::vector<int64_t>(1000, 1)), "1x1x1x1x1x1x1x1x1x1x... (1000 dimensions)");
}

// inputs() answers from what set_body remembered, and a body assigned directly (a copied
// node given another) is read afresh: never the old body's tensors.
TEST(Tensor, InputsFollowTheBody) {
  Tensor A = placeholder({4}, DataType::f32(), "A"), B = placeholder({4}, DataType::f32(), "B");
  Tensor C = compute({4}, [&](const std::vector<Var>& i) { return A(i[0]) * B(i[0]) + A(i[0]); }, "C");
  auto names = [](const std::vector<Tensor>& ts) {
    std::vector<std::string> out;
    for (const Tensor& t : ts) out.push_back(t->name);
    return out;
  };
  EXPECT_EQ(names(C->inputs()), (std::vector<std::string>{"A", "B"}));
  auto copy = std::make_shared<OperationNode>(*C);
  Var i = copy->axes[0].var;
  copy->body = B(i) + B(i);
  EXPECT_EQ(names(copy->inputs()), (std::vector<std::string>{"B"}));
  copy->set_body(A(i));
  EXPECT_EQ(names(copy->inputs()), (std::vector<std::string>{"A"}));
  EXPECT_EQ(names(C->inputs()), (std::vector<std::string>{"A", "B"}));
}
