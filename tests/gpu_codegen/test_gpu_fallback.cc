// Every op case under the GPU fallback schedule: OpenCL C on PoCL against the reference,
// CUDA C through NVRTC for every architecture.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>

#include "codegen/gpu_build.h"
#include "codegen/gpu_source.h"
#include "codegen/nvrtc.h"
#include "gpu_test_util.h"
#include "op_cases.h"
#include "ops/te_eval.h"
#include "schedule/gpu_fallback.h"

namespace tuner::testing {
namespace {

TEST(GpuFallback, EveryOpOnPoCL) {
  std::string missing;
  OpenCLRunner* cl = OpenCLRunner::get(&missing);
  if (!cl) GTEST_SKIP() << "skipped: " << missing;
  // One program with every case's kernels: PoCL's cost is mostly per build.
  std::vector<std::unique_ptr<OpCase>> cases;
  std::vector<schedule::GpuLoweredFunc> funcs;
  for (auto& [op, params_list] : op_cases())
    for (auto& params : params_list) {
      cases.push_back(std::make_unique<OpCase>(op, params));
      funcs.push_back(schedule::lower_gpu(
          schedule::gpu_fallback_schedule(cases.back()->dag).state(),
          "f" + std::to_string(funcs.size())));
    }
  ASSERT_GT(cases.size(), 100u);
  std::vector<const schedule::GpuLoweredFunc*> ptrs;
  for (auto& f : funcs) ptrs.push_back(&f);
  std::shared_ptr<OpenCLProgram> prog;
  try {
    prog = cl->build(codegen::emit_gpu_source(ptrs, codegen::GpuDialect::OpenCL));
  } catch (const std::exception&) {
    // Name the cases whose kernels do not build.
    for (size_t i = 0; i < funcs.size(); ++i) {
      std::string src = codegen::emit_gpu_source(funcs[i], codegen::GpuDialect::OpenCL);
      try {
        cl->build(src);
      } catch (const std::exception& e) {
        ADD_FAILURE() << cases[i]->str() << ": " << e.what() << "\n" << src;
      }
    }
    FAIL() << "the program of every case does not build";
  }
  for (size_t i = 0; i < funcs.size(); ++i) {
    try {
      std::string err = compare_outputs(*cases[i], cl->run(*prog, funcs[i], cases[i]->inputs));
      EXPECT_EQ(err, "") << cases[i]->str() << "\n" << funcs[i].str();
    } catch (const std::exception& e) {
      ADD_FAILURE() << cases[i]->str() << ": " << e.what();
    }
  }
}

// A NaN in either operand of min/max, pooling, the max/min reductions, Relu or Clip comes out
// as NaN (OpenCL's fmax would drop it), as on the CPU (tests/correctness).
TEST(GpuFallback, NaNPropagatesOnPoCL) {
  std::string missing;
  OpenCLRunner* cl = OpenCLRunner::get(&missing);
  if (!cl) GTEST_SKIP() << "skipped: " << missing;
  std::vector<std::unique_ptr<OpCase>> cases;
  std::vector<schedule::GpuLoweredFunc> funcs;
  for (const char* op :
       {"maximum", "minimum", "relu", "clip", "max_pool2d", "reduce_max", "reduce_min"}) {
    cases.push_back(std::make_unique<OpCase>(op, op_cases().at(op).front()));
    poison_with_nan(*cases.back());
    funcs.push_back(schedule::lower_gpu(schedule::gpu_fallback_schedule(cases.back()->dag).state(),
                                        "f" + std::to_string(funcs.size())));
  }
  std::vector<const schedule::GpuLoweredFunc*> ptrs;
  for (auto& f : funcs) ptrs.push_back(&f);
  auto prog = cl->build(codegen::emit_gpu_source(ptrs, codegen::GpuDialect::OpenCL));
  for (size_t i = 0; i < funcs.size(); ++i)
    EXPECT_EQ(compare_outputs(*cases[i], cl->run(*prog, funcs[i], cases[i]->inputs)), "")
        << cases[i]->str();
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

// A reduction of a whole long vector sums partial results in parallel, then those: it ran in
// one thread (grid 1, block 1) and one running float32 sum lost accuracy (as the CPU did).
TEST(GpuFallback, AWholeVectorIsSummedInPartials) {
  std::string missing;
  OpenCLRunner* cl = OpenCLRunner::get(&missing);
  if (!cl) GTEST_SKIP() << "skipped: " << missing;
  for (const char* op : {"reduce_sum", "reduce_mean"}) {
    OpCase c(op, {"shape=1048576", "axes=0"});
    schedule::GpuLoweredFunc f = schedule::lower_gpu(schedule::gpu_fallback_schedule(c.dag).state(), "r");
    ASSERT_GE(f.kernels.size(), 2u) << f.str();  // the partials, then their sum
    const auto& k = f.kernels[0];
    EXPECT_GE(k.grid[0] * k.threads_per_block(), 1024) << f.str();
    auto out = cl->run(*cl->build(codegen::emit_gpu_source(f, codegen::GpuDialect::OpenCL)), f, c.inputs);
    EXPECT_EQ(compare_outputs(c, out, 1e-6, 1e-7), "") << op;
  }
}

// int8 and uint8 arithmetic wraps in its type before a cast reads it: C computes it in int
// (int8 100 * 100 cast to int32 was 10000 on the GPU, 16 on the CPU and in the IR).
TEST(GpuFallback, NarrowIntegerArithmeticWrapsBeforeACast) {
  std::string missing;
  OpenCLRunner* cl = OpenCLRunner::get(&missing);
  if (!cl) GTEST_SKIP() << "skipped: " << missing;
  for (te::DataType t : {te::DataType::i8(), te::DataType::u8()}) {
    te::Tensor a = te::placeholder({6}, t, "a"), b = te::placeholder({6}, t, "b");
    te::Tensor prod = te::compute(
        {6}, [&](const std::vector<te::Var>& i) { return a(i[0]) * b(i[0]) + a(i[0]); }, "prod");
    te::Tensor wide = te::compute(
        {6}, [&](const std::vector<te::Var>& i) { return te::cast(te::DataType::i32(), prod(i[0])); },
        "wide");
    te::ComputeDAG dag({a, b}, {wide});
    std::vector<ops::HostTensor> in = {
        ops::HostTensor::from_values({6}, t, {100, 100, 127, 64, 5, 50}),
        ops::HostTensor::from_values({6}, t, {100, 3, 1, 2, 5, 50})};
    std::vector<ops::HostTensor> want = ops::evaluate_dag(dag, in);
    schedule::GpuLoweredFunc f = schedule::lower_gpu(schedule::gpu_fallback_schedule(dag).state(), "w");
    std::string src = codegen::emit_gpu_source(f, codegen::GpuDialect::OpenCL);
    auto out = cl->run(*cl->build(src), f, in);
    ASSERT_EQ(out.size(), 1u);
    auto r = ops::compare(out[0], want[0], 0, 0);
    EXPECT_TRUE(r.ok) << t.str() << ": " << r.message << "\n" << src;
  }
}

// float16 kernels: CUDA's half comes from cuda_fp16.h and converts implicitly to and from
// float, so a float literal or a float math result beside a half made the code ambiguous; the
// kernels of every op that takes a dtype compile with NVRTC and, where PoCL offers
// cl_khr_fp16, match the reference.
TEST(GpuFallback, Float16OpsCompileWithNvrtcAndRunOnPoCL) {
  std::vector<std::unique_ptr<OpCase>> cases;
  std::vector<schedule::GpuLoweredFunc> funcs;
  for (auto& [op, params_list] : op_cases()) {
    const ops::OpDef& def = ops::find_op(op);
    if (std::none_of(def.params.begin(), def.params.end(),
                     [](const ops::OpParam& p) { return p.name == "dtype"; }))
      continue;
    std::vector<std::string> params;
    for (auto& p : params_list.front())
      if (p.rfind("dtype=", 0) != 0) params.push_back(p);
    params.push_back("dtype=float16");
    try {
      cases.push_back(std::make_unique<OpCase>(op, params));
    } catch (const UserError&) {
      continue;  // the op refuses float16 (Winograd)
    }
    funcs.push_back(schedule::lower_gpu(schedule::gpu_fallback_schedule(cases.back()->dag).state(),
                                        "h" + std::to_string(funcs.size())));
  }
  ASSERT_GT(cases.size(), 40u);
  std::vector<const schedule::GpuLoweredFunc*> ptrs;
  for (auto& f : funcs) ptrs.push_back(&f);

  std::string missing = nvrtc_missing();
  if (missing.empty()) {
    std::string src = codegen::emit_gpu_source(ptrs, codegen::GpuDialect::Cuda);
    for (auto& arch : gpu_archs()) {
      try {
        EXPECT_FALSE(codegen::nvrtc_compile(src, arch).cubin.empty()) << arch;
      } catch (const codegen::NvrtcError& e) {
        ADD_FAILURE() << e.what();
      }
    }
  } else {
    std::cout << "NVRTC part skipped: " << missing << "\n";
  }

  OpenCLRunner* cl = OpenCLRunner::get(&missing);
  if (!cl || !cl->has_extension("cl_khr_fp16")) {
    std::cout << "PoCL part skipped: " << (cl ? cl->device_name() + " has no cl_khr_fp16" : missing)
              << "\n";
    return;
  }
  auto prog = cl->build(codegen::emit_gpu_source(ptrs, codegen::GpuDialect::OpenCL));
  for (size_t i = 0; i < funcs.size(); ++i)
    EXPECT_EQ(compare_outputs(*cases[i], cl->run(*prog, funcs[i], cases[i]->inputs), 1e-2, 1e-2),
              "")
        << cases[i]->str();
}

}  // namespace
}  // namespace tuner::testing
