// GPU lowering pieces: the bind/set_scope instructions in traces, launch dimensions,
// barriers, the verifier's messages, the two dialects and the ptxas log parser.
#include <gtest/gtest.h>

#include "codegen/gpu_build.h"
#include "codegen/gpu_source.h"
#include "codegen/nvrtc.h"
#include "gpu_test_util.h"
#include "op_cases.h"
#include "schedule/gpu_fallback.h"
#include "search/space_gpu.h"

namespace tuner::testing {
namespace {

using schedule::Schedule;

const codegen::Target& sm80() {
  static codegen::Target t = codegen::Target::parse("cuda -arch=sm_80");
  return t;
}

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

// relu over n elements, fused loop split by `threads` and bound to blocks and threads.
Schedule bound_relu(const OpCase& c, int64_t threads) {
  Schedule s(c.dag);
  std::string out = c.dag.outputs()[0]->name;
  auto parts = s.split(out, 0, {threads});
  s.bind(out, parts[0], "blockIdx.x");
  s.bind(out, parts[1], "threadIdx.x");
  return s;
}

TEST(GpuVerifier, RejectsTwoThousandThreadsPerBlock) {
  OpCase c("relu", {"shape=8192"});
  Schedule s = bound_relu(c, 2048);
  try {
    codegen::lower_and_verify_gpu(s.state(), sm80(), "k");
    FAIL() << "not rejected";
  } catch (const codegen::GpuLimitError& e) {
    EXPECT_NE(std::string(e.what()).find("k_k0: 2048 threads per block (2048x1x1) exceed the limit of 1024"),
              std::string::npos)
        << e.what();
  }
  // 1024 threads fit.
  auto f = codegen::lower_and_verify_gpu(bound_relu(c, 1024).state(), sm80(), "k");
  EXPECT_EQ(f.kernels.at(0).block[0], 1024);
  EXPECT_EQ(f.kernels.at(0).grid[0], 8);
}

TEST(GpuVerifier, RejectsTwoHundredKilobytesOfSharedMemory) {
  // A 200x256 float operand staged whole in shared memory: 204800 bytes.
  OpCase c("matmul", {"m=200", "n=64", "k=256"});
  Schedule s(c.dag);
  std::string mm = c.dag.outputs()[0]->name;
  auto i = s.split(mm, 0, {200});
  s.bind(mm, i[0], "blockIdx.x");
  s.bind(mm, i[1], "threadIdx.x");
  std::string a = c.dag.inputs()[0]->name;
  std::string cache = s.cache_read(a, {mm});
  s.set_scope(cache, "shared");
  s.compute_at(cache, mm, i[0]);
  try {
    codegen::lower_and_verify_gpu(s.state(), sm80(), "k");
    FAIL() << "not rejected";
  } catch (const codegen::GpuLimitError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "204800 bytes of shared memory per block exceed the limit of 49152 bytes (48 KiB)"),
              std::string::npos)
        << e.what();
  }
}

TEST(GpuTrace, BindAndScopeRoundTripThroughJson) {
  OpCase c("matmul", {"m=64", "n=64", "k=64"});
  search::SpaceOptions o = search::space_options_for(sm80());
  Schedule s = search::generate_gpu_schedule(c.dag, o, 7);
  std::string js = s.trace().str();
  EXPECT_NE(js.find("\"bind\""), std::string::npos);
  EXPECT_NE(js.find("threadIdx.x"), std::string::npos);
  auto back = schedule::Trace::from_json(Json::parse(js));
  EXPECT_EQ(back, s.trace());
  Schedule r = Schedule::replay(c.dag, back);
  EXPECT_EQ(r.state().str(), s.state().str());
  EXPECT_EQ(schedule::lower_gpu(r.state(), "k").str(), schedule::lower_gpu(s.state(), "k").str());
}

TEST(GpuTrace, BindRefusesReductionsAndDuplicateTags) {
  OpCase c("matmul", {"m=8", "n=8", "k=8"});
  Schedule s(c.dag);
  std::string mm = c.dag.outputs()[0]->name;
  EXPECT_THROW(s.bind(mm, 2, "threadIdx.x"), schedule::ScheduleError);
  s.bind(mm, 0, "threadIdx.x");
  EXPECT_THROW(s.bind(mm, 1, "threadIdx.x"), schedule::ScheduleError);
  EXPECT_THROW(s.bind(mm, 1, "warp.x"), schedule::ScheduleError);
}

TEST(GpuLowering, SharedTileGetsBarriersAroundTheFetch) {
  // A shared cache at the reduction loop k.o: barrier after the fetch, and at the end of the
  // k.o body so the next fetch does not overwrite what other threads still read.
  OpCase c("matmul", {"m=64", "n=64", "k=64"});
  Schedule s(c.dag);
  std::string mm = c.dag.outputs()[0]->name;
  auto i = s.split(mm, 0, {16});
  auto j = s.split(mm, 1, {16});
  auto k = s.split(mm, 2, {8});
  s.reorder(mm, {i[0], j[0], i[1], j[1], k[0], k[1]});
  int b = s.fuse(mm, {i[0], j[0]});
  s.bind(mm, b, "blockIdx.x");
  int t = s.fuse(mm, {i[1], j[1]});
  s.bind(mm, t, "threadIdx.x");
  std::string cache = s.cache_read(c.dag.inputs()[0]->name, {mm});
  s.set_scope(cache, "shared");
  s.compute_at(cache, mm, k[0]);
  auto& cs = s.state().stage(cache);
  int f = s.fuse(cache, {cs.leaves[0], cs.leaves[1]});
  auto parts = s.split(cache, f, {256});
  s.bind(cache, parts[1], "threadIdx.x");
  auto fn = codegen::lower_and_verify_gpu(s.state(), sm80(), "k");
  ASSERT_EQ(fn.kernels.size(), 1u);
  EXPECT_EQ(fn.kernels[0].shared_bytes, 16 * 8 * 4);  // relaxed over the 256 threads' rows
  EXPECT_EQ(fn.kernels[0].block[0], 256);
  EXPECT_EQ(count(fn.str(), "barrier"), 2) << fn.str();
  std::string cu = codegen::emit_gpu_source(fn, codegen::GpuDialect::Cuda);
  std::string ocl = codegen::emit_gpu_source(fn, codegen::GpuDialect::OpenCL);
  EXPECT_EQ(count(cu, "__syncthreads();"), 2);
  EXPECT_EQ(count(cu, "__shared__ float"), 1);
  EXPECT_NE(cu.find("extern \"C\" __global__"), std::string::npos);
  EXPECT_EQ(count(ocl, "barrier(CLK_LOCAL_MEM_FENCE);"), 2);
  EXPECT_EQ(count(ocl, "__local float"), 1);
  EXPECT_NE(ocl.find("get_local_id(0)"), std::string::npos);
  EXPECT_NE(ocl.find("__kernel"), std::string::npos);

  std::string missing;
  if (OpenCLRunner* cl = OpenCLRunner::get(&missing)) {
    auto prog = cl->build(ocl);
    EXPECT_EQ(compare_outputs(c, cl->run(*prog, fn, c.inputs)), "");
  } else {
    std::cout << "PoCL run skipped: " << missing << "\n";
  }
}

TEST(GpuLowering, BarrierInDivergentCodeIsAScheduleError) {
  // The consumer's thread loop (extent 8) is shorter than the block (the fetch uses 64
  // threads): threads 8..63 would skip the barrier.
  OpCase c("matmul", {"m=8", "n=8", "k=64"});
  Schedule s(c.dag);
  std::string mm = c.dag.outputs()[0]->name;
  s.bind(mm, 0, "threadIdx.x");
  std::string cache = s.cache_read(c.dag.inputs()[0]->name, {mm});
  s.set_scope(cache, "shared");
  s.compute_at(cache, mm, 1);
  auto& cs = s.state().stage(cache);
  int f = s.fuse(cache, {cs.leaves[0], cs.leaves[1]});
  auto parts = s.split(cache, f, {64});
  s.bind(cache, parts[1], "threadIdx.x");
  try {
    schedule::lower_gpu(s.state(), "k");
    FAIL() << "lowered";
  } catch (const schedule::ScheduleError& e) {
    EXPECT_NE(std::string(e.what()).find("needs a barrier inside a loop bound to threadIdx.x of extent 8 < 64"),
              std::string::npos)
        << e.what();
  }
}

TEST(GpuLowering, LocalStageMayNotBindThreads) {
  OpCase c("matmul", {"m=8", "n=8", "k=8"});
  Schedule s(c.dag);
  std::string mm = c.dag.outputs()[0]->name;
  std::string local = s.cache_write(mm);
  s.bind(mm, 0, "threadIdx.x");
  s.compute_at(local, mm, 0);
  s.bind(local, 0, "threadIdx.y");
  EXPECT_THROW(schedule::lower_gpu(s.state(), "k"), schedule::ScheduleError);
}

TEST(GpuLowering, RootStagesBecomeKernelsWithWorkspaces) {
  OpCase c("softmax", {"shape=8x67"});
  auto f = schedule::lower_gpu(schedule::gpu_fallback_schedule(c.dag).state(), "sm");
  EXPECT_EQ(f.kernels.size(), 3u);
  EXPECT_EQ(f.params.size(), 4u);  // x, softmax, and two row workspaces
  auto params = codegen::gpu_params(f);
  EXPECT_EQ(params[2].role, codegen::GpuParam::Workspace);
  EXPECT_EQ(params[2].bytes(), 8 * 4);
}

TEST(Nvrtc, ParsesThePtxasLog) {
  std::string log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'a_k0' for 'sm_90'\n"
      "ptxas info    : Function properties for a_k0\n"
      "ptxas         .     16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Used 40 registers, used 1 barriers, 2048 bytes smem\n"
      "ptxas info    : Compiling entry function 'a_k1' for 'sm_90'\n"
      "ptxas info    : Used 12 registers\n";
  auto k = codegen::parse_ptxas_log(log);
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[0].name, "a_k0");
  EXPECT_EQ(k[0].registers, 40);
  EXPECT_EQ(k[0].shared_bytes, 2048);
  EXPECT_EQ(k[0].spill_stores, 8);
  EXPECT_EQ(k[0].spill_loads, 4);
  EXPECT_EQ(k[0].stack_bytes, 16);
  EXPECT_EQ(k[1].registers, 12);
  EXPECT_EQ(k[1].shared_bytes, 0);
}

TEST(Nvrtc, AnErrorKeepsTheErrorsAndDropsTheWarnings) {
  std::string log =
      "k.cu(3): warning #177-D: variable \"t\" was declared but never referenced\n"
      "    int t;\n"
      "        ^\n\n"
      "k.cu(7): error: identifier \"half\" is undefined\n"
      "    half x = a[i];\n"
      "    ^\n\n"
      "k.cu(9): error: identifier \"half\" is undefined\n"
      "k.cu(11): catastrophic error: cannot open source file \"x.h\"\n"
      "nvrtc: error: invalid value for --gpu-architecture (-arch)\n"
      "3 errors detected in the compilation of \"k.cu\".\n";
  EXPECT_EQ(codegen::nvrtc_errors(log, 2),
            "k.cu(7): error: identifier \"half\" is undefined; "
            "k.cu(9): error: identifier \"half\" is undefined (and 2 more errors)");
  EXPECT_EQ(codegen::nvrtc_errors(log, 9).find("warning"), std::string::npos);
  EXPECT_EQ(codegen::nvrtc_errors("ptxas info    : Used 12 registers\n"), "");
}

TEST(Nvrtc, BuildsAGpuKernelWithResources) {
  std::string missing = nvrtc_missing();
  if (!missing.empty()) GTEST_SKIP() << "skipped: " << missing;
  OpCase c("matmul", {"m=64", "n=64", "k=64"});
  search::SpaceOptions o = search::space_options_for(sm80());
  for (auto arch : {"sm_80", "sm_90"}) {
    // The first candidate of the space that passes the verifier.
    for (uint64_t seed = 1; seed < 50; ++seed) {
      Schedule s = search::generate_gpu_schedule(c.dag, o, seed);
      codegen::GpuBuild b;
      try {
        b = codegen::build_gpu_kernel(s.state(), codegen::Target::parse(std::string("cuda -arch=") + arch), "mm");
      } catch (const codegen::GpuLimitError&) {
        continue;
      }
      EXPECT_EQ(b.arch, arch);
      EXPECT_FALSE(b.cubin.empty());
      EXPECT_EQ(b.cubin.substr(0, 4), "\x7f" "ELF");
      EXPECT_NE(b.ptx.find(".target " + std::string(arch)), std::string::npos);
      ASSERT_EQ(b.kernels.size(), 1u);
      EXPECT_EQ(b.kernels[0].entry, "mm_k0");
      EXPECT_GT(b.kernels[0].registers, 0);
      EXPECT_EQ(b.params.size(), 3u);
      break;
    }
  }
}

using namespace te;

TEST(GpuSource, RepeatedIndexArithmeticIsDeclaredOnce) {
  // out[x % 64] = n > 2 ? in[x / n] + in[x / n] : in[x / 8] + in[x % 8] + in[x / -1 + 63]
  // + in[x / -1 + 63], x = 4 * tx + 1, in a loop over n: x is declared once; x / n stays where
  // it is (its divisor may be zero where the select does not take that arm), and so does
  // x / -1 (INT_MIN / -1 traps): each is spelt twice.
  Var tx{"tx"}, n{"n"};
  Buffer in = make_buffer("in", DataType::f32(), {64});
  Buffer out = make_buffer("out", DataType::f32(), {64});
  Expr x = tx * make_int(4) + make_int(1);
  Expr by_n = buffer_load(in, {floordiv(x, n)});
  Expr by_minus_1 = buffer_load(in, {floordiv(x, make_int(-1)) + make_int(63)});
  Expr value = select(n > make_int(2), by_n + by_n,
                      buffer_load(in, {floordiv(x, make_int(8))}) +
                          buffer_load(in, {floormod(x, make_int(8))}) + by_minus_1 + by_minus_1);
  schedule::GpuKernelIR k;
  k.name = "k";
  k.block = {16, 1, 1};
  k.index_vars = {{ForKind::ThreadIdxX, tx}};
  k.body = make_for(n, make_int(0), make_int(5), ForKind::Serial,
                    buffer_store(out, value, {floormod(x, make_int(64))}));
  schedule::GpuLoweredFunc f;
  f.name = "f";
  f.params = {in, out};
  f.num_inputs = f.num_outputs = 1;
  f.kernels = {k};
  for (auto d : {codegen::GpuDialect::Cuda, codegen::GpuDialect::OpenCL}) {
    std::string src = codegen::emit_gpu_source(f, d);
    std::string tid = d == codegen::GpuDialect::Cuda ? "threadIdx.x" : "get_local_id(0)";
    EXPECT_EQ(count(src, tid), 1) << src;
    EXPECT_EQ(count(src, "const int c"), 1) << src;
    EXPECT_EQ(count(src, "tfloordiv_i32(c_, n_)"), 2) << src;
    EXPECT_EQ(count(src, "tfloordiv_i32(c_, (-1))"), 2) << src;
    EXPECT_EQ(count(src, "tfloormod_i32(c_, 64)"), 1) << src;
  }
}

TEST(GpuSource, NarrowIntegersAreNotDeclared) {
  // (a + b) / 2 + (a + b) in uint8: C adds chars as int (200 + 200 = 400); a declared
  // unsigned char would hold 144.
  Var a{"a", DataType::u8()}, b{"b", DataType::u8()};
  Buffer out = make_buffer("out", DataType::f32(), {1});
  Expr sum = a + b;
  Expr value = cast(DataType::f32(), floordiv(sum, make_const(DataType::u8(), 2))) +
               cast(DataType::f32(), sum);
  schedule::GpuKernelIR k;
  k.name = "k";
  k.body = make_for(a, make_const(DataType::u8(), 0), make_const(DataType::u8(), 2), ForKind::Serial,
                    make_for(b, make_const(DataType::u8(), 0), make_const(DataType::u8(), 2),
                             ForKind::Serial, buffer_store(out, value, {make_int(0)})));
  schedule::GpuLoweredFunc f;
  f.name = "f";
  f.params = {out};
  f.num_outputs = 1;
  f.kernels = {k};
  std::string src = codegen::emit_gpu_source(f, codegen::GpuDialect::Cuda);
  EXPECT_EQ(count(src, " c_ = "), 0) << src;
  EXPECT_EQ(count(src, "(a_ + b_)"), 2) << src;
}

TEST(GpuSource, WinogradTransformsNameTheirIndexArithmetic) {
  // Lowering spells a Winograd transform's tile position in every arm of a 36-way select:
  // 1490 copies of blockIdx.x in one statement before the emitter declared them once.
  OpCase c("winograd_conv", op_cases().at("winograd_conv")[0]);
  auto space = search::space_options_for(sm80());
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    auto s = search::generate_gpu_schedule(c.dag, space, seed);
    auto fn = codegen::lower_and_verify_gpu(s.state(), sm80(), "w");
    std::string src = codegen::emit_gpu_source(fn, codegen::GpuDialect::Cuda);
    size_t start = 0;
    for (size_t end; (end = src.find('\n', start)) != std::string::npos; start = end + 1)
      ASSERT_LE(count(src.substr(start, end - start), "blockIdx.x"), 2)
          << "seed " << seed << ": " << src.substr(start, std::min<size_t>(end - start, 2000));
  }
}

}  // namespace
}  // namespace tuner::testing
