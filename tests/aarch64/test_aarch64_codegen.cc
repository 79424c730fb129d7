// AArch64 code generation (no emulator needed): NEON vector widths for ARM cores, NEON
// instructions for vectorized loops, and aarch64 ELF shared objects linked by ld.lld.
#include <elf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <regex>

#include "codegen/build.h"
#include "codegen/compile.h"
#include "codegen/default_schedule.h"
#include "emulated.h"
#include "kernel_check.h"
#include "schedule/lower.h"

using namespace tuner;
using namespace tuner::testing;

namespace {

// The assembly of an op's fallback schedule compiled for `target`.
std::string fallback_asm(const std::string& op, const std::vector<std::string>& params,
                         const codegen::Target& target) {
  OpCase c(op, params);
  auto sched = codegen::default_schedule(c.dag, target);
  codegen::CompileOptions co;
  co.build.keep_asm = true;
  return codegen::build_kernel(sched.state(), target, "k", co).assembly;
}

int count_matches(const std::string& text, const std::string& re) {
  std::regex r(re);
  return int(
      std::distance(std::sregex_iterator(text.begin(), text.end(), r), std::sregex_iterator()));
}

}  // namespace

TEST(Aarch64Target, NeonLanesForArmCores) {
  for (const char* cpu : {"cortex-a72", "cortex-a53", "neoverse-n1", "neoverse-v1", "generic"}) {
    auto t = codegen::Target::parse(std::string("llvm -mtriple=aarch64-linux-gnu -mcpu=") + cpu);
    EXPECT_EQ(t.llvm_arch(), "aarch64") << cpu;
    EXPECT_EQ(t.vector_lanes(), 4) << cpu;  // 128-bit NEON: 4 floats
    EXPECT_EQ(t.vector_lanes(te::DataType::f16()), 8) << cpu;
    EXPECT_FALSE(t.runs_on_host()) << cpu;
    EXPECT_EQ(codegen::Target::parse(t.str()).str(), t.str()) << cpu;
  }
  // Lanes come from the CPU's features, whatever the host: an AVX-512 x86 CPU has 16.
  EXPECT_EQ(
      codegen::Target::parse("llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512").vector_lanes(),
      16);
  EXPECT_EQ(codegen::Target::parse("llvm -mtriple=x86_64-linux-gnu -mcpu=haswell").vector_lanes(),
            8);
  EXPECT_EQ(codegen::Target::parse("llvm -mtriple=x86_64-linux-gnu -mcpu=x86-64").vector_lanes(),
            4);
}

TEST(Aarch64Codegen, VectorizedLoopsUseNeon) {
  const auto& t = aarch64_target();
  // add: the fallback vectorizes the innermost loop by 4 lanes -> NEON fadd on .4s registers.
  std::string add = fallback_asm("add", {"a=1024", "b=1024"}, t);
  EXPECT_GT(count_matches(add, R"(fadd\s+v[0-9]+\.4s)"), 0) << add;
  EXPECT_EQ(count_matches(add, R"(%xmm|%ymm|%zmm)"), 0);
  // matmul: the register tile's multiply-adds contract into NEON fmla.
  std::string mm = fallback_asm("matmul", {"m=16", "n=32", "k=16"}, t);
  EXPECT_GT(count_matches(mm, R"(fmla\s+v[0-9]+\.4s)"), 4) << mm;
}

TEST(Aarch64Codegen, SharedObjectIsAarch64Elf) {
  OpCase c("relu", {"shape=64"});
  std::string dir = codegen::make_temp_dir("tuner-test");
  std::string so = dir + "/k.so";
  codegen::build_shared_object({schedule::lower(schedule::State(c.dag), "k")}, aarch64_target(),
                               so);
  std::ifstream in(so, std::ios::binary);
  Elf64_Ehdr h{};
  in.read(reinterpret_cast<char*>(&h), sizeof h);
  ASSERT_TRUE(in.good());
  EXPECT_EQ(std::string(reinterpret_cast<char*>(h.e_ident), 4), std::string(ELFMAG, 4));
  EXPECT_EQ(h.e_ident[EI_CLASS], ELFCLASS64);
  EXPECT_EQ(h.e_type, ET_DYN);
  EXPECT_EQ(h.e_machine, EM_AARCH64);
  unlink(so.c_str());
  rmdir(dir.c_str());
}
