// Every op of the core library (the cases of tests/correctness) under random traces of the
// GPU design space: each distinct trace that passes the verifier is compiled by NVRTC for
// sm_80 and sm_90 and run on PoCL (built unoptimized) against the reference. All traces of a
// case go into ONE CUDA program per architecture and ONE OpenCL program, so a case costs one
// compile each.
// TUNER_GPU_TRACES sets the number of traces per case (default 8; the acceptance run uses 50,
// see bench/RESULTS.md); TUNER_GPU_ALL_CASES=1 checks every case of an op instead of its
// first; TUNER_GPU_ALL_ARCHS=1 compiles for every architecture of gpu_archs(), not only the
// first (the source does not depend on it, and NVRTC's front end is most of the time: the
// default run halves its cost; GpuFallback compiles every op for all of them).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <set>

#include "codegen/gpu_build.h"
#include "codegen/gpu_source.h"
#include "codegen/nvrtc.h"
#include "gpu_test_util.h"
#include "op_cases.h"
#include "search/space_gpu.h"

namespace tuner::testing {
namespace {

int env_int(const char* name, int dflt) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : dflt;
}

class GpuRandomTraces : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuRandomTraces, CompileAndMatchReference) {
  std::string missing;
  OpenCLRunner* cl = OpenCLRunner::get(&missing);
  std::string nv_missing = nvrtc_missing();
  if (!cl && !nv_missing.empty()) GTEST_SKIP() << "skipped: " << missing << "; " << nv_missing;
  if (!cl) std::cout << "PoCL part skipped: " << missing << "\n";
  if (!nv_missing.empty()) std::cout << "NVRTC part skipped: " << nv_missing << "\n";
  const int traces = env_int("TUNER_GPU_TRACES", 8);
  auto target = codegen::Target::parse("cuda -arch=sm_80");
  search::SpaceOptions space = search::space_options_for(target);
  const auto& cases = op_cases().at(GetParam());
  size_t ncases = env_int("TUNER_GPU_ALL_CASES", 0) ? cases.size() : 1;
  for (size_t ci = 0; ci < ncases; ++ci) {
    OpCase c(GetParam(), cases[ci]);
    std::vector<schedule::GpuLoweredFunc> funcs;
    std::set<std::string> seen;
    int rejected = 0, invalid = 0;
    for (int t = 0; t < traces; ++t) {
      auto s = search::generate_gpu_schedule(c.dag, space, uint64_t(t) + 1);
      if (!seen.insert(s.trace().str()).second) continue;
      try {
        funcs.push_back(codegen::lower_and_verify_gpu(s.state(), target, "t" + std::to_string(t)));
      } catch (const codegen::GpuLimitError&) {
        ++rejected;
      } catch (const schedule::ScheduleError& e) {
        ++invalid;
        ADD_FAILURE() << c.str() << " trace " << t << " does not lower: " << e.what() << "\n"
                      << s.trace().pretty();
      }
    }
    std::vector<const schedule::GpuLoweredFunc*> ptrs;
    size_t nkernels = 0;
    for (auto& f : funcs) {
      ptrs.push_back(&f);
      nkernels += f.kernels.size();
    }
    std::cout << c.str() << ": " << seen.size() << " distinct traces of " << traces << ", "
              << funcs.size() << " built, " << rejected << " rejected by the verifier\n";
    if (funcs.empty()) continue;
    if (nv_missing.empty()) {
      std::string src = codegen::emit_gpu_source(ptrs, codegen::GpuDialect::Cuda);
      if (const char* dump = std::getenv("TUNER_GPU_DUMP")) {
        FILE* fp = std::fopen(dump, "w");
        std::fputs(src.c_str(), fp);
        std::fclose(fp);
      }
      size_t narchs = env_int("TUNER_GPU_ALL_ARCHS", 0) ? gpu_archs().size() : 1;
      for (size_t ai = 0; ai < narchs; ++ai) {
        const std::string& arch = gpu_archs()[ai];
        try {
          auto out = codegen::nvrtc_compile(src, arch);
          EXPECT_EQ(out.kernels.size(), nkernels) << c.str() << " " << arch;
          EXPECT_FALSE(out.cubin.empty());
          std::cout << "  nvrtc " << arch << ": " << nkernels << " kernels in " << out.seconds << " s\n";
        } catch (const codegen::NvrtcError& e) {
          ADD_FAILURE() << c.str() << ": " << e.what();
        }
      }
    }
    if (cl) {
      std::string src = codegen::emit_gpu_source(ptrs, codegen::GpuDialect::OpenCL);
      if (const char* dump = std::getenv("TUNER_GPU_DUMP_CL")) {
        FILE* fp = std::fopen(dump, "w");
        std::fputs(src.c_str(), fp);
        std::fclose(fp);
      }
      try {
        auto t0 = std::chrono::steady_clock::now();
        // Unoptimized: PoCL's optimizer was most of this test's time (a conv2d case 26 s ->
        // 1.1 s); GpuFallback.EveryOpOnPoCL runs the schedules used by default optimized.
        auto prog = cl->build(src, /*optimize=*/false);
        for (auto& f : funcs) {
          std::string err = compare_outputs(c, cl->run(*prog, f, c.inputs));
          EXPECT_EQ(err, "") << c.str() << " " << f.name << "\n" << f.str();
        }
        std::cout << "  pocl: " << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()
                  << " s\n";
      } catch (const std::exception& e) {
        ADD_FAILURE() << c.str() << ": " << e.what();
      }
    }
  }
}

std::vector<std::string> op_names() {
  std::vector<std::string> v;
  for (auto& [op, cases] : op_cases()) v.push_back(op);
  return v;
}

INSTANTIATE_TEST_SUITE_P(Ops, GpuRandomTraces, ::testing::ValuesIn(op_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tuner::testing
