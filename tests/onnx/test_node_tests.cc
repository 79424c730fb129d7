// The ONNX backend node tests of the supported operators, run by the graph interpreter and
// compiled.
// TUNER_ONNX_NODE_TESTS overrides the data directory; TUNER_ONNX_NODE_FILTER runs only the
// tests whose name contains it; TUNER_ONNX_NODE_VERBOSE=1 prints each test as it finishes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>

#include "graph/evaluate.h"
#include "onnx/node_harness.h"

namespace tuner::onnx_tests {
namespace {

const NodeTestRunner kInterpreter = [](const std::string&, const graph::Graph& g,
                                       const std::vector<ops::HostTensor>& inputs) {
  return graph::evaluate_graph(g, inputs);
};

// The data directory, or nullopt after saying why the test skips.
std::optional<std::string> node_test_dir() {
  std::optional<std::string> dir = find_node_test_dir();
  if (!dir)
    std::cout << "skipped: onnx Python package not found (scripts/install-deps.sh installs it)\n";
  return dir;
}

NodeTestOptions options_from_env() {
  NodeTestOptions o;
  if (const char* f = std::getenv("TUNER_ONNX_NODE_FILTER")) o.filter = f;
  if (const char* v = std::getenv("TUNER_ONNX_NODE_VERBOSE"); v && *v && *v != '0')
    o.progress = [](const NodeTestResult& r) {
      static const char* names[] = {"passed", "FAILED", "unsupported", "n/a opset", "n/a ops"};
      std::cerr << r.name << ": " << names[int(r.status)] << " " << r.seconds << " s "
                << r.message << "\n";
    };
  return o;
}

const NodeTestRunner kCompiled = [](const std::string&, const graph::Graph& g,
                                    const std::vector<ops::HostTensor>& inputs) {
  return run_compiled(g, inputs);
};

// Runs the node tests through `runner` (old opsets lifted to 11 when asked): none may fail,
// and without a filter at least `min_passed` must pass.
void expect_all_pass(const NodeTestRunner& runner, bool lift_old_opsets, const std::string& label,
                     int min_passed) {
  std::optional<std::string> dir = node_test_dir();
  if (!dir) GTEST_SKIP() << "onnx Python package not found";
  NodeTestOptions o = options_from_env();
  o.lift_old_opsets = lift_old_opsets;
  NodeTestSummary s = run_node_tests(*dir, runner, o);
  std::cout << label << s.report() << std::flush;
  EXPECT_EQ(s.count(NodeTestStatus::Failed), 0) << s.headline();
  if (o.filter.empty()) {
    EXPECT_GE(s.count(NodeTestStatus::Passed), min_passed) << s.headline();
  }
}

TEST(OnnxNodeTests, InterpreterMatchesReference) { expect_all_pass(kInterpreter, false, "", 251); }

// Old-opset tests of operators unchanged since (GlobalAveragePool, Elu, ...), read as opset 11.
TEST(OnnxNodeTests, OldOpsetsOfUnchangedOperators) {
  expect_all_pass(kInterpreter, true, "Opset < 11 with unchanged operators, read as 11: ", 10);
}

// The same tests compiled (graph passes, fusion, fallback schedules, LLVM, two threads): this
// checks the code we generate, the interpreter the converters' semantics.
TEST(OnnxNodeTests, CompiledMatchesReference) { expect_all_pass(kCompiled, false, "compiled: ", 251); }

TEST(OnnxNodeTests, CompiledOldOpsetsOfUnchangedOperators) {
  expect_all_pass(kCompiled, true, "compiled, opset < 11 read as 11: ", 10);
}

}  // namespace
}  // namespace tuner::onnx_tests
