// On a real CUDA device (ctest label gpu): candidates built by the Builder for the device's
// arch run through the sandboxed runner, are checked against the op's reference and timed with
// CUDA events; a kernel writing out of bounds is RUNTIME_DEVICE and the next candidate runs in a
// fresh context. Without a device every test says why it is skipped.
#include <gtest/gtest.h>

#include <fstream>

#include "codegen/nvrtc.h"
#include "measure/builder.h"
#include "measure/cuda_driver.h"
#include "measure/sandbox_runner.h"
#include "ops/registry.h"
#include "schedule/gpu_fallback.h"
#include "search/space.h"
#include "search/space_gpu.h"

namespace tuner::measure {
namespace {

// The device to test on, or the reason there is none (then the test is skipped).
const cuda::DeviceInfo* device(std::string* why) {
  static cuda::DeviceInfo dev;
  static std::string reason = [] {
    if (!codegen::nvrtc_available()) return "built without NVRTC: " + codegen::nvrtc_version();
    std::vector<cuda::DeviceInfo> devs;
    std::string r = cuda::probe(&devs);
    if (r.empty()) dev = devs.front();
    return r;
  }();
  *why = reason;
  return reason.empty() ? &dev : nullptr;
}

#define SKIP_WITHOUT_CUDA_DEVICE()                                              \
  std::string why_;                                                             \
  const cuda::DeviceInfo* dev = device(&why_);                                  \
  if (!dev) GTEST_SKIP() << "skipped: no usable CUDA device here: " << why_;

SandboxRunner gpu_runner(const cuda::DeviceInfo& dev) {
  LocalRunnerOptions o;
  o.memory_limit_mb = 0;  // the CUDA driver maps more address space than any such limit
  o.cuda_device = dev.ordinal;
  o.min_repeat_ms = 5;
  o.timeout_s = 30;
  return SandboxRunner(o);
}

// An op's task as data, its expected outputs from the op's naive reference on the host.
TaskData op_task(const ops::OpDef& op, const ops::Params& p, const te::ComputeDAG& dag) {
  TaskData t;
  t.key = op.name + " " + p.str();
  t.inputs = op.make_inputs(p, dag, 7);
  t.expected = op.reference(p, t.inputs);
  for (const auto& o : dag.outputs()) t.outputs.push_back({o->dtype, o->shape});
  return t;
}

TEST(CudaDevice, OpsAreCorrectAndTimed) {
  SKIP_WITHOUT_CUDA_DEVICE();
  codegen::Target target = codegen::Target::parse("cuda -arch=" + dev->arch());
  SandboxRunner runner = gpu_runner(*dev);
  Builder builder;
  struct Case {
    const char* op;
    std::vector<std::string> params;
  };
  for (const Case& c : {Case{"matmul", {"m=256", "n=256", "k=256"}},
                        Case{"conv2d", {"n=1", "c=32", "h=28", "w=28", "k=64", "kh=3", "kw=3",
                                        "pad=1"}},
                        Case{"softmax", {"shape=64x1000"}}}) {
    const ops::OpDef& op = ops::find_op(c.op);
    ops::Params p = ops::parse_params(op, c.params);
    te::ComputeDAG dag = op.build(p);
    std::vector<schedule::Trace> traces = {schedule::gpu_fallback_schedule(dag).trace()};
    search::SpaceOptions so = search::space_options_for(target);
    for (uint64_t seed = 1; seed <= 8; ++seed)
      traces.push_back(search::generate_schedule(dag, so, seed).trace());
    auto built = builder.build(dag, traces, target);
    auto results = runner.run(op_task(op, p, dag), built);
    int ok = 0;
    for (size_t i = 0; i < results.size(); ++i) {
      if (!built[i].ok()) continue;  // over the device's limits: not this test's subject
      EXPECT_TRUE(results[i].ok()) << c.op << " candidate " << i << ": " << results[i].str();
      if (results[i].ok()) {
        ++ok;
        EXPECT_GT(results[i].median(), 0);
      }
    }
    EXPECT_GT(ok, 0) << c.op;
  }
}

TEST(CudaDevice, IllegalAddressIsRuntimeDeviceAndTheContextRecovers) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const ops::OpDef& op = ops::find_op("matmul");
  ops::Params p = ops::parse_params(op, {"m=64", "n=64", "k=64"});
  te::ComputeDAG dag = op.build(p);
  codegen::Target target = codegen::Target::parse("cuda -arch=" + dev->arch());
  auto good = Builder().build(dag, {schedule::gpu_fallback_schedule(dag).trace()}, target);
  ASSERT_TRUE(good[0].ok()) << good[0].error;

  // Writes far outside its output buffer.
  auto bad_cubin = codegen::nvrtc_compile(
      "extern \"C\" __global__ void bad(float* a, float* b, float* c) {"
      "  c[threadIdx.x + (1ll << 40)] = 1.0f; }",
      dev->arch());
  TempDir dir("tuner-gpu-test");
  std::string path = dir.path() + "/bad.cubin";
  std::ofstream(path, std::ios::binary) << bad_cubin.cubin;
  BuiltCandidate bad = BuiltCandidate::from_file(path, "bad");
  bad.gpu = GpuProgram{{GpuLaunch{"bad", {1, 1, 1}, {32, 1, 1}, 0}}, {}};

  SandboxRunner runner = gpu_runner(*dev);
  auto results = runner.run(op_task(op, p, dag), {bad, good[0]});
  EXPECT_EQ(results[0].status, db::MeasureStatus::RuntimeDevice) << results[0].str();
  EXPECT_TRUE(results[1].ok()) << results[1].str();
  EXPECT_EQ(runner.children_started(), 2);
}

}  // namespace
}  // namespace tuner::measure
