// Every op case under the GPU fallback schedule: OpenCL C on PoCL against the reference,
// CUDA C through NVRTC for every architecture.
#include <gtest/gtest.h>

#include "codegen/gpu_build.h"
#include "codegen/gpu_source.h"
#include "codegen/nvrtc.h"
#include "gpu_test_util.h"
#include "op_cases.h"
#include "schedule/gpu_fallback.h"

namespace tuner::testing {
namespace {

TEST(GpuFallback, EveryOpOnPoCL) {
  std::string missing;
  OpenCLRunner* cl = OpenCLRunner::get(&missing);
  if (!cl) GTEST_SKIP() << "skipped: " << missing;
  int checked = 0;
  for (auto& [op, cases] : op_cases())
    for (auto& params : cases) {
      OpCase c(op, params);
      auto s = schedule::gpu_fallback_schedule(c.dag);
      auto f = schedule::lower_gpu(s.state(), "k");
      std::string src = codegen::emit_gpu_source(f, codegen::GpuDialect::OpenCL);
      try {
        auto prog = cl->build(src);
        auto outs = cl->run(*prog, f, c.inputs);
        std::string err = compare_outputs(c, outs);
        EXPECT_EQ(err, "") << c.str() << "\n" << f.str();
      } catch (const std::exception& e) {
        ADD_FAILURE() << c.str() << ": " << e.what() << "\n" << src;
      }
      ++checked;
    }
  EXPECT_GT(checked, 100);
}

TEST(GpuFallback, EveryOpCompilesWithNvrtc) {
  std::string missing = nvrtc_missing();
  if (!missing.empty()) GTEST_SKIP() << "skipped: " << missing;
  // One program per architecture with every case's kernels.
  std::vector<schedule::GpuLoweredFunc> funcs;
  int i = 0;
  for (auto& [op, cases] : op_cases())
    for (auto& params : cases) {
      OpCase c(op, params);
      funcs.push_back(schedule::lower_gpu(schedule::gpu_fallback_schedule(c.dag).state(),
                                          "f" + std::to_string(i++)));
    }
  std::vector<const schedule::GpuLoweredFunc*> ptrs;
  size_t nkernels = 0;
  for (auto& f : funcs) {
    ptrs.push_back(&f);
    nkernels += f.kernels.size();
  }
  std::string src = codegen::emit_gpu_source(ptrs, codegen::GpuDialect::Cuda);
  for (auto& arch : gpu_archs()) {
    try {
      auto out = codegen::nvrtc_compile(src, arch);
      EXPECT_EQ(out.kernels.size(), nkernels) << arch;
      EXPECT_FALSE(out.cubin.empty());
      EXPECT_NE(out.ptx.find(".entry"), std::string::npos);
    } catch (const codegen::NvrtcError& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

}  // namespace
}  // namespace tuner::testing
