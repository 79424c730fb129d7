// The ONNX backend node tests compiled: each model through the graph passes, fusion, fallback
// schedules, LLVM and the executor (two threads), compared with the reference outputs. The
// interpreter runs the same tests in test_node_tests.cc; this checks the code we generate.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>

#include "onnx/node_harness.h"

namespace tuner::onnx_tests {
namespace {

const NodeTestRunner kCompiled = [](const std::string&, const graph::Graph& g,
                                    const std::vector<ops::HostTensor>& inputs) {
  return run_compiled(g, inputs);
};

TEST(OnnxNodeTests, CompiledMatchesReference) {
  std::optional<std::string> dir = find_node_test_dir();
  if (!dir) {
    std::cout << "skipped: onnx Python package not found (scripts/install-deps.sh installs it)\n";
    GTEST_SKIP() << "onnx Python package not found";
  }
  NodeTestOptions o;
  if (const char* f = std::getenv("TUNER_ONNX_NODE_FILTER")) o.filter = f;
  NodeTestSummary s = run_node_tests(*dir, kCompiled, o);
  std::cout << "compiled: " << s.report() << std::flush;
  EXPECT_EQ(s.count(NodeTestStatus::Failed), 0) << s.headline();
  if (o.filter.empty()) EXPECT_GT(s.count(NodeTestStatus::Passed), 250) << s.headline();

  // Old-opset tests of operators unchanged since (Elu, Selu, GlobalAveragePool, ...).
  o.lift_old_opsets = true;
  NodeTestSummary old = run_node_tests(*dir, kCompiled, o);
  std::cout << "compiled, opset < 11 read as 11: " << old.report() << std::flush;
  EXPECT_EQ(old.count(NodeTestStatus::Failed), 0) << old.headline();
  if (o.filter.empty()) EXPECT_GE(old.count(NodeTestStatus::Passed), 10) << old.headline();
}

}  // namespace
}  // namespace tuner::onnx_tests
