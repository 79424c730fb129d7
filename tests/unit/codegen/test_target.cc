#include <gtest/gtest.h>

#include <algorithm>

#include "codegen/target.h"
#include "runtime/cpu_features.h"
#include "support/error.h"

using tuner::UserError;
using tuner::codegen::Target;

TEST(Target, HostDefaultsAreExplicitInTheCanonicalString) {
  Target t = Target::parse("llvm");
  EXPECT_EQ(t.kind, "llvm");
  EXPECT_FALSE(t.cpu.empty());
  EXPECT_EQ(t.str().rfind("llvm -mtriple=", 0), 0u);
  EXPECT_NE(t.str().find("-mcpu=" + t.cpu), std::string::npos);
  EXPECT_EQ(Target::parse(t.str()).str(), t.str());
  EXPECT_EQ(Target::parse("llvm -mcpu=native").str(), t.str());
  EXPECT_TRUE(t.runs_on_host());
  EXPECT_GE(t.vector_lanes(), 4);
}

TEST(Target, CrossTargets) {
  Target a = Target::parse("llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72");
  EXPECT_EQ(a.cpu, "cortex-a72");
  EXPECT_FALSE(a.runs_on_host());
  EXPECT_EQ(Target::parse("cuda -arch=sm_90").str(), "cuda -arch=sm_90");
}

// Register tiles are sized by the SIMD unit: AVX2 has 16 registers of 8 floats, AVX-512 32 of
// 16, NEON 32 of 4.
TEST(Target, SimdUnitsOfKnownCpus) {
  auto unit = [](const std::string& s) {
    Target t = Target::parse(s);
    return std::pair{t.vector_lanes(), t.vector_registers()};
  };
  EXPECT_EQ(unit("llvm -mtriple=x86_64-pc-linux-gnu -mcpu=znver3"), std::pair(8, 16));
  EXPECT_EQ(unit("llvm -mtriple=x86_64-pc-linux-gnu -mcpu=skylake-avx512"), std::pair(16, 32));
  EXPECT_EQ(unit("llvm -mtriple=x86_64-pc-linux-gnu -mcpu=x86-64"), std::pair(4, 16));
  EXPECT_EQ(unit("llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72"), std::pair(4, 32));
}

TEST(Target, EnabledFeaturesFollowTheCpuAndMattr) {
  std::vector<std::string> names = {"avx2", "fma", "avx512f", "avx512bw", "no-such-feature"};
  auto f = [&](const char* t) { return Target::parse(t).enabled_features(names); };
  EXPECT_EQ(f("llvm -mtriple=x86_64-pc-linux-gnu -mcpu=skylake-avx512"),
            (std::vector<std::string>{"avx2", "fma", "avx512f", "avx512bw"}));
  EXPECT_EQ(f("llvm -mtriple=x86_64-pc-linux-gnu -mcpu=znver3"),
            (std::vector<std::string>{"avx2", "fma"}));
  EXPECT_EQ(f("llvm -mtriple=x86_64-pc-linux-gnu -mcpu=znver3 -mattr=+avx512f"),
            (std::vector<std::string>{"avx2", "fma", "avx512f"}));
  EXPECT_TRUE(f("cuda -arch=sm_80").empty());
}

// `tuner run` and the C API check the same features: the instruction-set extensions kernels
// may use, with the newer ones (float16 arithmetic, AMX, APX's registers) among them and no
// system feature (a VM hides pku, mwaitx, rdpru, wbnoinvd: skylake-avx512 and znver3 code
// was refused on a Zen 5 VM where it runs; sapphirerapids code loaded through the C API on a
// CPU without AVX512-FP16 and died of SIGILL).
TEST(Target, TheCliAndTheRuntimeCheckTheSameCpuFeatures) {
  const auto& checked = tuner::runtime::checkable_cpu_features();
#if defined(__x86_64__)
  for (const char* f : {"avx2", "avx512f", "avx512fp16", "amx-tile", "amx-fp16", "egpr", "avxvnniint8", "fma4", "xop"})
    EXPECT_NE(std::find(checked.begin(), checked.end(), f), checked.end()) << f;
  // AMD Bulldozer code multiplies with FMA4 (it loaded anywhere and died of SIGILL).
  std::vector<std::string> bd = Target::parse("llvm -mcpu=bdver1").enabled_features(checked);
  for (const char* f : {"fma4", "xop", "sse4a"})
    EXPECT_NE(std::find(bd.begin(), bd.end(), f), bd.end()) << f;
#endif
  for (const char* f : {"pku", "mwaitx", "rdpru", "wbnoinvd", "invpcid"})
    EXPECT_EQ(std::find(checked.begin(), checked.end(), f), checked.end()) << f;
  for (const char* cpu : {"skylake-avx512", "znver3", "sapphirerapids", "graniterapids", "bdver1", "bdver4"}) {
    Target t = Target::parse(std::string("llvm -mcpu=") + cpu);
    for (const std::string& f : t.host_lacks())
      EXPECT_NE(std::find(checked.begin(), checked.end(), f), checked.end()) << cpu << ": " << f;
    std::vector<std::string> runtime_lacks = tuner::runtime::host_lacks_cpu_features(t.enabled_features(checked));
    std::sort(runtime_lacks.begin(), runtime_lacks.end());
    EXPECT_EQ(t.host_lacks(), runtime_lacks) << cpu;
  }
}

TEST(Target, EmulatedIsADistinctIdentityOfTheSameCode) {
  Target a = Target::parse("llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72");
  Target e = Target::parse("llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -emulator=qemu");
  EXPECT_FALSE(a.emulated());
  EXPECT_TRUE(e.emulated());
  EXPECT_EQ(e.str(), a.str() + " -emulator=qemu");
  EXPECT_EQ(a.with_emulator("qemu").str(), e.str());
  EXPECT_EQ(e.with_emulator("").str(), a.str());
  EXPECT_EQ(e.vector_lanes(), a.vector_lanes());
  EXPECT_TRUE(tuner::codegen::is_emulated_target(e.str()));
  EXPECT_FALSE(tuner::codegen::is_emulated_target(a.str()));
  EXPECT_FALSE(tuner::codegen::is_emulated_target("not a target"));
  EXPECT_THROW(Target::parse("llvm -emulator=bochs"), UserError);
}

TEST(Target, BadStringsNameTheProblem) {
  auto message = [](const std::string& s) {
    try {
      Target::parse(s);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(message("vulkan").find("unknown target kind 'vulkan'"), std::string::npos);
  // The names people try first say what to write instead.
  EXPECT_NE(message("arm").find("for arm write \"llvm -mtriple=aarch64-linux-gnu\""), std::string::npos)
      << message("arm");
  EXPECT_NE(message("gpu").find("for gpu write \"cuda\""), std::string::npos) << message("gpu");
  EXPECT_NE(message("x86_64 -mcpu=znver4").find("write \"llvm\""), std::string::npos);
  EXPECT_NE(message("llvm -mfoo=1").find("unknown option '-mfoo'"), std::string::npos);
  EXPECT_NE(message("llvm -mcpu=pentium99").find("unknown CPU 'pentium99'"), std::string::npos);
  EXPECT_NE(message("llvm -mtriple=nonsense-x-y").find("nonsense"), std::string::npos);
  EXPECT_NE(message("cuda -arch=sm_x").find("sm_x"), std::string::npos);
  EXPECT_NE(message("llvm mcpu").find("malformed"), std::string::npos);
  EXPECT_NE(message("").find("empty target"), std::string::npos);
  // A client's string is quoted with its control characters escaped: a NUL does not cut the
  // message short, an escape sequence does not reach a terminal.
  EXPECT_NE(message(std::string("vul\0kan", 7)).find("unknown target kind 'vul\\x00kan'"),
            std::string::npos);
  EXPECT_NE(message("llvm -mcpu=\x1b[2J").find("unknown CPU '\\x1b[2J'"), std::string::npos);
}

TEST(Target, KernelsAreBuiltForX86Aarch64AndCudaOnly) {
  for (const char* s :
       {"llvm", "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72", "cuda -arch=sm_80"})
    EXPECT_NO_THROW(Target::parse(s).check_builds_kernels()) << s;
  // Another architecture parses (tasks, assembly) but its kernels cannot be linked.
  Target rv = Target::parse("llvm -mtriple=riscv64-linux-gnu");
  try {
    rv.check_builds_kernels();
    ADD_FAILURE() << "riscv64 kernels accepted";
  } catch (const UserError& e) {
    EXPECT_NE(
        std::string(e.what()).find("builds kernels for x86_64, aarch64 and cuda, not for riscv64"),
        std::string::npos)
        << e.what();
  }
}
