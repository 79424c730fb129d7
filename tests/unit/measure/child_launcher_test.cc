#include "measure/target_launcher.h"

#include <gtest/gtest.h>

#include "support/error.h"

namespace tuner::measure {

TEST(ChildLauncher, HostKernelsRunInTheNativeChild) {
  auto host = codegen::Target::parse("llvm");
  EXPECT_EQ(launcher_unavailable(host), "");
  ChildLauncher l = launcher_for(host);
  ASSERT_EQ(l.command.size(), 1u);
  EXPECT_NE(l.command[0].find("tuner-measure-child"), std::string::npos);
  EXPECT_EQ(l.arch, host.llvm_arch());
  EXPECT_EQ(l.device, "local");
  EXPECT_FALSE(l.emulated);
}

TEST(ChildLauncher, Aarch64KernelsRunUnderQemuOrSayWhatIsMissing) {
  auto a = codegen::Target::parse("llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72");
  std::string missing = launcher_unavailable(a);
  if (!missing.empty()) {
    // Names the missing piece and its Debian package.
    EXPECT_NE(missing.find("install"), std::string::npos) << missing;
    try {
      launcher_for(a);
      ADD_FAILURE() << "launcher_for succeeded although " << missing;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
    }
    GTEST_SKIP() << "skipped: " << missing;
  }
  ChildLauncher l = launcher_for(a);
  ASSERT_EQ(l.command.size(), 4u);
  EXPECT_NE(l.command[0].find("qemu-aarch64"), std::string::npos);
  EXPECT_EQ(l.command[1], "-L");
  EXPECT_NE(l.command[3].find("tuner-measure-child-aarch64"), std::string::npos);
  EXPECT_EQ(l.arch, "aarch64");
  EXPECT_EQ(l.device, "qemu-aarch64");
  EXPECT_TRUE(l.emulated);
  EXPECT_GT(l.overhead_mb, 0);
}

TEST(ChildLauncher, TargetArchIsReadWithoutLlvmAsLlvmReadsIt) {
  for (const char* s : {"llvm", "llvm -mcpu=native", "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72",
                        "llvm -mtriple=arm64-unknown-linux-gnu", "llvm -mtriple=riscv64-linux-gnu",
                        "llvm -mtriple=x86_64-unknown-linux-gnu"})
    EXPECT_EQ(target_arch(s), codegen::Target::parse(s).llvm_arch()) << s;
  EXPECT_EQ(target_arch("cuda -arch=sm_90"), "");
  EXPECT_EQ(host_arch(), codegen::Target::host().llvm_arch());
  EXPECT_EQ(launcher_unavailable_for_arch(host_arch()), "");
  EXPECT_FALSE(launcher_for_arch(host_arch(), "host kernels").emulated);
}

TEST(ChildLauncher, OtherArchitecturesAndCudaAreRefused) {
  auto rv = codegen::Target::parse("llvm -mtriple=riscv64-linux-gnu");
  EXPECT_NE(launcher_unavailable(rv).find("no emulator for riscv64"), std::string::npos);
  EXPECT_THROW(launcher_for(rv), UserError);
  EXPECT_THROW(launcher_for(codegen::Target::parse("cuda -arch=sm_90")), UserError);
}

}  // namespace tuner::measure
