// The ONNX backend node tests (onnx/backend/test/data/node/<test>/ of the Python onnx
// package): every test whose operators Tuner converts and whose opset it reads is imported,
// run through a pluggable runner and compared with the reference outputs. Tuner compiles
// static graphs, so inputs that a converter reads as constants (Reshape's shape, Slice's
// starts, Clip's bounds, ...) are bound to the test's values: the model is rewritten with
// them as initializers, and the runner sees that model and the remaining inputs.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "codegen/target.h"
#include "graph/graph.h"
#include "graph/passes.h"
#include "ops/host_tensor.h"

namespace tuner::onnx_tests {

/// Runs an imported model on inputs (in graph input order) and returns its outputs: the
/// interpreter (graph::evaluate_graph) or the compiled model (run_compiled).
using NodeTestRunner = std::function<std::vector<ops::HostTensor>(
    const std::string& model_path, const graph::Graph&, const std::vector<ops::HostTensor>&)>;

/// What became of one test directory.
enum class NodeTestStatus { Passed, Failed, UnsupportedVariant, WrongOpset, MissingOperator };

struct NodeTestResult {
  std::string name;  // the test directory's name (test_conv_with_strides_padding)
  NodeTestStatus status = NodeTestStatus::Failed;
  std::vector<std::string> ops;  // operator types of the model, distinct, sorted
  std::string message;           // one line; empty for a pass
  double seconds = 0;            // import + run + compare, in the child
};

/// Outcome of a whole run.
struct NodeTestSummary {
  std::vector<NodeTestResult> results;
  int count(NodeTestStatus s) const;
  /// "ONNX node tests: P passed of A applicable (U unsupported variants; N not applicable:
  /// X opset, Y operators)".
  std::string headline() const;
  /// The headline, per-operator pass counts, unsupported variants and failures.
  std::string report() const;
};

/// The node test data directory: $TUNER_ONNX_NODE_TESTS when set, else the one of the onnx
/// package of the python3 on PATH; nullopt when neither exists.
std::optional<std::string> find_node_test_dir();

/// How to run the node tests.
struct NodeTestOptions {
  /// Only the tests whose directory name contains this (all when empty).
  std::string filter;
  /// Reads every model as this default-domain opset (0: as the model says). For operators
  /// whose newer version only added attributes (Resize 18 = 13 + antialias, axes,
  /// keep_aspect_ratio_policy), this checks newer test data; the ONNX checker refuses the
  /// models that use the new attributes.
  int64_t read_as_opset = 0;
  /// Runs only models below opset 11 whose operators all have the same schema version at
  /// their opset and at 11 (by libonnx's registry), read as opset 11: the same semantics.
  bool lift_old_opsets = false;
  /// A test running longer is killed and fails.
  int timeout_s = 60;
  /// Sees each result as it comes, when set.
  std::function<void(const NodeTestResult&)> progress;
};

/// Compiles an imported model as `tuner compile` does (graph passes for the host's vectors,
/// fusion, fallback schedules, LLVM), runs it on two threads and returns its outputs.
std::vector<ops::HostTensor> run_compiled(const graph::Graph& imported,
                                          const std::vector<ops::HostTensor>& inputs);
/// The same for `target` (it must run here) after the passes `passes`.
std::vector<ops::HostTensor> run_compiled(const graph::Graph& imported, const std::vector<ops::HostTensor>& inputs,
                                          const codegen::Target& target, const graph::PassOptions& passes);

/// Runs one test directory (model.onnx, test_data_set_0/{input,output}_*.pb). The import and
/// the run happen in a child process, so a crash or a hang is a failure of this test only.
NodeTestResult run_node_test(const std::string& test_dir, const NodeTestRunner& runner,
                             const NodeTestOptions& options = {});

/// Runs every test directory under `node_dir` that the options select.
NodeTestSummary run_node_tests(const std::string& node_dir, const NodeTestRunner& runner,
                               const NodeTestOptions& options = {});

}  // namespace tuner::onnx_tests
