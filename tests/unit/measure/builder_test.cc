#include "measure/builder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>

#include "codegen/default_schedule.h"
#include "codegen/nvrtc.h"
#include "schedule/fallback.h"
#include "schedule/gpu_fallback.h"
#include "schedule/schedule.h"
#include "unit/measure/measure_test_util.h"

namespace tuner::measure {

using db::MeasureStatus;

namespace {

schedule::Trace invalid_trace() {
  schedule::Trace t;
  schedule::Instruction inst;
  inst.kind = schedule::InstKind::Split;
  inst.stage = "no_such_stage";
  inst.args = {0, 4};
  t.insts.push_back(inst);
  return t;
}

schedule::Trace fallback_trace(const te::ComputeDAG& dag) {
  return codegen::default_schedule(dag, test::host()).trace();
}

}  // namespace

TEST(Builder, InvalidTraceIsInstantiation) {
  Builder b;
  auto dag = test::matmul_dag(32, 32, 32);
  auto out = b.build(dag, {invalid_trace()}, test::host());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].status, MeasureStatus::Instantiation) << out[0].error;
  EXPECT_NE(out[0].error.find("no_such_stage"), std::string::npos) << out[0].error;
  EXPECT_TRUE(out[0].so_path.empty());
}

TEST(Builder, BuildsEachDistinctProgramOnce) {
  BuilderOptions bo;
  bo.threads = 2;
  Builder b(bo);
  auto dag = test::matmul_dag(64, 64, 64);
  schedule::Trace fb = fallback_trace(dag);
  auto out = b.build(dag, {fb, schedule::Trace{}, fb, invalid_trace()}, test::host());
  ASSERT_EQ(out.size(), 4u);
  for (int i : {0, 1, 2}) {
    EXPECT_EQ(out[i].status, MeasureStatus::Ok) << out[i].error;
    EXPECT_TRUE(std::filesystem::exists(out[i].so_path));
    EXPECT_EQ(out[i].symbol, "kernel");
    EXPECT_GT(out[i].build_seconds, 0);
  }
  EXPECT_EQ(out[0].duplicate_of, -1);
  EXPECT_EQ(out[1].duplicate_of, -1);
  EXPECT_EQ(out[2].duplicate_of, 0);
  EXPECT_EQ(out[2].so_path, out[0].so_path);
  EXPECT_EQ(out[2].program_hash, out[0].program_hash);
  EXPECT_NE(out[1].program_hash, out[0].program_hash);
  EXPECT_NE(out[1].so_path, out[0].so_path);
  EXPECT_EQ(out[3].status, MeasureStatus::Instantiation);
  EXPECT_EQ(out[3].program_hash, 0u);
  EXPECT_EQ(b.dir().rfind(std::filesystem::temp_directory_path().string(), 0), 0u);
}

// Builds not started when the run stops are skipped: a cancelled server job waited minutes
// for its round of 256 candidates to build to the end.
TEST(Builder, StopSkipsTheBuildsNotStarted) {
  Builder b;
  auto dag = test::matmul_dag(64, 64, 64);
  schedule::Trace fb = fallback_trace(dag);
  std::atomic<int> asked{0};
  auto stop = [&] { return ++asked > 0; };
  auto out = b.build(dag, {fb, schedule::Trace{}, invalid_trace()}, test::host(), stop);
  ASSERT_EQ(out.size(), 3u);
  for (int i : {0, 1, 2}) {
    EXPECT_EQ(out[i].status, MeasureStatus::Unknown) << i;
    EXPECT_EQ(out[i].error, "not built: the run was stopped") << i;
    EXPECT_TRUE(out[i].so_path.empty()) << i;
  }
  EXPECT_EQ(asked, 3);  // asked once per candidate, before lowering it
  // Not stopped: built as ever.
  auto built = b.build(dag, {fb}, test::host(), [] { return false; });
  EXPECT_EQ(built[0].status, MeasureStatus::Ok) << built[0].error;
}

TEST(Builder, FilesGoAwayWithTheirCandidates) {
  std::string dir;
  std::string so;
  {
    Builder b;
    dir = b.dir();
    auto dag = test::matmul_dag(16, 16, 16);
    auto out = b.build(dag, {schedule::Trace{}}, test::host());
    ASSERT_TRUE(out[0].ok()) << out[0].error;
    so = out[0].so_path;
    EXPECT_TRUE(std::filesystem::exists(so));
    out.clear();
    EXPECT_FALSE(std::filesystem::exists(so));
    EXPECT_TRUE(std::filesystem::exists(dir));
  }
  EXPECT_FALSE(std::filesystem::exists(dir));
}

// A folder deleted under a running tuner (a /tmp cleaner) is made again; a file that cannot be
// written (a full disk: /dev/full stands in) fails the whole build with a HostError, not a
// COMPILE_HOST record against the candidate.
TEST(Builder, DeletedFolderIsMadeAgainAndAFullDiskIsTheHostsError) {
  Builder b;
  auto dag = test::matmul_dag(16, 16, 16);
  std::filesystem::remove_all(b.dir());
  auto out = b.build(dag, {schedule::Trace{}}, test::host());
  ASSERT_TRUE(out[0].ok()) << out[0].error;
  std::filesystem::create_symlink("/dev/full", b.dir() + "/k1.so.o");  // the next object file
  try {
    b.build(dag, {fallback_trace(dag)}, test::host());
    ADD_FAILURE() << "a full disk was not a HostError";
  } catch (const HostError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write " + b.dir() + "/k1.so.o"), std::string::npos)
        << e.what();
  }
}

TEST(Builder, SlowBuildIsBuildTimeoutAndIsAbandoned) {
  BuilderOptions bo;
  bo.timeout_s = 1e-4;
  auto dag = test::matmul_dag(64, 64, 64);
  {
    Builder b(bo);
    auto out = b.build(dag, {fallback_trace(dag)}, test::host());
    EXPECT_EQ(out[0].status, MeasureStatus::BuildTimeout) << out[0].error;
    EXPECT_TRUE(out[0].so_path.empty());
    // The destructor waits for the abandoned build to finish.
  }
  SUCCEED();
}

// CUDA candidates: lowered, verified and compiled by NVRTC into a cubin with its launches;
// one over the target's limits is an INSTANTIATION error naming the limit.
TEST(Builder, BuildsCudaProgramsWithNvrtc) {
  if (!codegen::nvrtc_available())
    GTEST_SKIP() << "skipped: built without NVRTC (" << codegen::nvrtc_version() << ")";
  Builder b;
  auto dag = test::matmul_dag(64, 64, 64);
  schedule::Schedule too_wide(dag);
  schedule::auto_bind(too_wide, "matmul", 2048);
  auto fallback = schedule::gpu_fallback_schedule(dag).trace();
  auto out = b.build(dag, {fallback, too_wide.trace(), fallback},
                     codegen::Target::parse("cuda -arch=sm_80"));
  ASSERT_EQ(out[0].status, MeasureStatus::Ok) << out[0].error;
  ASSERT_TRUE(out[0].gpu.has_value());
  ASSERT_FALSE(out[0].gpu->kernels.empty());
  const GpuLaunch& k = out[0].gpu->kernels[0];
  EXPECT_FALSE(k.entry.empty());
  EXPECT_EQ(int64_t(k.grid[0]) * k.block[0] * k.grid[1] * k.block[1] >= 64, true);
  std::ifstream cubin(out[0].so_path, std::ios::binary);
  char magic[4] = {};
  cubin.read(magic, 4);
  EXPECT_EQ(std::string(magic, 4), "\x7f" "ELF") << out[0].so_path;
  EXPECT_EQ(out[1].status, MeasureStatus::Instantiation);
  EXPECT_NE(out[1].error.find("2048"), std::string::npos) << out[1].error;
  // The same CUDA source is compiled once: the duplicate shares the leader's cubin.
  ASSERT_EQ(out[2].status, MeasureStatus::Ok) << out[2].error;
  EXPECT_EQ(out[2].duplicate_of, 0);
  EXPECT_EQ(out[2].so_path, out[0].so_path);
  ASSERT_TRUE(out[2].gpu.has_value());
  EXPECT_EQ(out[2].gpu->kernels.size(), out[0].gpu->kernels.size());
}

TEST(Builder, CrossCompilesForAarch64) {
  Builder b;
  auto dag = test::matmul_dag(16, 16, 16);
  auto out = b.build(dag, {schedule::Trace{}},
                     codegen::Target::parse("llvm -mtriple=aarch64-linux-gnu"));
  EXPECT_EQ(out[0].status, MeasureStatus::Ok) << out[0].error;
}

}  // namespace tuner::measure
