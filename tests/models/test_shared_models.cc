// Acceptance (issue 6): every model in ../shared/models compiles with an empty database and
// its outputs match the reference outputs (rtol 1e-3, atol 1e-4); resnet18 compiles in <= 30 s.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>

#include "compile/compile_model.h"
#include "graph/onnx_import.h"
#include "graph/passes.h"
#include "graph/tensor_proto.h"
#include "runtime/executor.h"

namespace tuner {

namespace fs = std::filesystem;

namespace {

fs::path models_dir() {
  if (const char* env = std::getenv("TUNER_SHARED_MODELS")) return env;
  return fs::path(TUNER_SOURCE_DIR) / ".." / "shared" / "models";
}

}  // namespace

// Outside the anonymous namespace: a unity build warns of a test whose fixture is inside it.
class SharedModel : public ::testing::TestWithParam<std::string> {};

TEST_P(SharedModel, CompilesUntunedAndMatchesReference) {
  fs::path dir = models_dir() / GetParam();
  if (!fs::exists(dir / "model.onnx")) {
    std::printf("skipped: ../shared/models not found (%s)\n", dir.string().c_str());
    GTEST_SKIP() << "skipped: ../shared/models not found";
  }
  auto t0 = std::chrono::steady_clock::now();
  graph::Graph g = graph::import_onnx((dir / "model.onnx").string());
  compile::ModelCompileOptions o;
  o.target = codegen::Target::parse("llvm");
  graph::run_passes(g, compile::pass_options_for(o.target));  // the CPU layouts, as `tuner compile` chooses
  compile::CompileReport rep;
  runtime::Artifact art = compile::compile_model(g, o, &rep);
  double compile_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("  %s: %d kernels, %d tasks, compiled in %.2f s; arena %.1f MiB (unplanned %.1f)\n",
              GetParam().c_str(), rep.groups, rep.tasks, compile_s,
              double(rep.arena_bytes) / (1 << 20), double(rep.unplanned_bytes) / (1 << 20));
  EXPECT_EQ(rep.tasks_from_db, 0);
  EXPECT_LE(compile_s, 30.0);
  EXPECT_LT(rep.arena_bytes, rep.unplanned_bytes);  // the plan reuses memory

  // Through the artifact file, as a user would.
  std::string path = (fs::temp_directory_path() / ("tuner_test_" + GetParam() + ".tuner")).string();
  art.save(path);
  runtime::Executor ex(runtime::Artifact::load(path), 2);
  fs::remove(path);
  ASSERT_EQ(ex.num_inputs(), 1u);
  ops::HostTensor in = graph::load_tensor_file((dir / "test_data_set_0" / "input_0.pb").string());
  ex.set_input(0, in.raw(), in.bytes());
  ex.run();
  ops::HostTensor ref = graph::load_tensor_file((dir / "test_data_set_0" / "output_0.pb").string());
  ASSERT_EQ(ex.output_desc(0).shape, ref.shape);
  ops::HostTensor got(ref.shape, ref.dtype);
  std::memcpy(got.raw(), ex.output(0), got.bytes());
  ops::CompareResult cmp = ops::compare(got, ref, 1e-3, 1e-4);
  EXPECT_TRUE(cmp.ok) << cmp.message;
  std::printf("  %s: max abs error %.3g\n", GetParam().c_str(), cmp.max_abs_error);
}

INSTANTIATE_TEST_SUITE_P(Models, SharedModel,
                         ::testing::Values("resnet18", "mobilenet_v2", "bert_encoder"));

}  // namespace tuner
