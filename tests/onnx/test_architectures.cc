// Small models in the shapes of common architectures (make_architectures.py: SE blocks,
// dense concatenation, inception branches, a YOLO neck, a U-Net block, a transformer layer,
// a ResNeXt block, a block in opset 18's forms), compiled and compared with the graph interpreter on random inputs: the
// node tests check each operator's semantics, these check how they fuse and schedule together.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "graph/evaluate.h"
#include "graph/onnx_import.h"
#include "onnx/node_harness.h"
#include "support/rng.h"

namespace tuner::onnx_tests {
namespace {

namespace fs = std::filesystem;

TEST(Architectures, CompiledMatchesInterpreter) {
  if (!find_node_test_dir()) {
    std::cout << "skipped: onnx Python package not found (scripts/install-deps.sh installs it)\n";
    GTEST_SKIP() << "onnx Python package not found";
  }
  fs::path dir = fs::temp_directory_path() / ("tuner-architectures-" + std::to_string(getpid()));
  struct Cleanup {
    fs::path dir;
    ~Cleanup() { fs::remove_all(dir); }
  } cleanup{dir};
  std::string cmd = "python3 " + (fs::path(TUNER_SOURCE_DIR) / "tests/onnx/make_architectures.py").string() +
                    " " + dir.string();
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  int models = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    SCOPED_TRACE(entry.path().filename().string());
    graph::Graph g = graph::import_onnx(entry.path().string());
    Rng rng(7);
    std::vector<ops::HostTensor> in;
    for (int v : g.inputs)
      in.push_back(ops::HostTensor::random(g.values[size_t(v)].shape, g.values[size_t(v)].dtype, rng));
    std::vector<ops::HostTensor> want = graph::evaluate_graph(g, in), got = run_compiled(g, in);
    ASSERT_EQ(got.size(), want.size());
    for (size_t o = 0; o < want.size(); ++o) {
      ASSERT_EQ(got[o].shape, want[o].shape);
      double worst = 0;
      for (int64_t i = 0; i < want[o].num_elements(); ++i) {
        double a = got[o].get(i), b = want[o].get(i);
        worst = std::max(worst, std::abs(a - b) / (1e-4 + 1e-3 * std::abs(b)));
      }
      EXPECT_LE(worst, 1.0) << "output " << o << " differs beyond rtol 1e-3, atol 1e-4";
    }
    ++models;
  }
  EXPECT_EQ(models, 8);
}

}  // namespace
}  // namespace tuner::onnx_tests
