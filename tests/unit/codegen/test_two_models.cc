// Two compiled models in one process (the C API allows it, `tuner tune` measures the untuned
// and tuned model side by side): each must run its own kernels, though their names are equal.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "codegen/build.h"
#include "ops/registry.h"
#include "runtime/executor.h"
#include "schedule/lower.h"

using namespace tuner;

namespace {

runtime::Artifact elementwise_model(const std::string& op) {
  auto& def = ops::find_op(op);
  auto dag = def.build(ops::parse_params(def, {"a=8", "b=8"}));
  std::string dir = codegen::make_temp_dir("tuner-test");
  std::string so = dir + "/k.so";
  codegen::build_shared_object({schedule::lower(schedule::State(dag), "k")},
                               codegen::Target::parse("llvm"), so);
  runtime::Artifact a;
  std::ifstream in(so, std::ios::binary);
  a.shared_object.assign(std::istreambuf_iterator<char>(in), {});
  std::filesystem::remove_all(dir);
  a.plan.model = op;
  a.plan.target = "llvm";
  a.plan.buffers = {{"x", {8}, "float32", 32, runtime::Storage::Input, 0},
                    {"y", {8}, "float32", 32, runtime::Storage::Input, 1},
                    {"z", {8}, "float32", 32, runtime::Storage::Output, 0}};
  a.plan.inputs = {0, 1};
  a.plan.outputs = {2};
  a.plan.steps = {{"k", {0, 1, 2}, op, 0}};
  return a;
}

}  // namespace

TEST(TwoModels, EachRunsItsOwnKernelsThoughTheirNamesAreEqual) {
  runtime::Executor add(elementwise_model("add"), 1);
  runtime::Executor mul(elementwise_model("mul"), 1);
  float x[8], y[8];
  for (int i = 0; i < 8; ++i) x[i] = float(i), y[i] = 3.0f;
  for (auto* ex : {&add, &mul}) {
    ex->set_input(0, x, sizeof x);
    ex->set_input(1, y, sizeof y);
    ex->run();
  }
  const float* sum = static_cast<const float*>(add.output(0));
  const float* product = static_cast<const float*>(mul.output(0));
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(sum[i], float(i) + 3.0f) << i;
    EXPECT_EQ(product[i], float(i) * 3.0f) << i;
  }
}
