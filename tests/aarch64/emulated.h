// Shared by the aarch64 tests: the target, and skipping (with the reason) where qemu-aarch64
// or the cross-built aarch64 measurement child is missing.
#pragma once

#include <gtest/gtest.h>

#include "codegen/target.h"
#include "measure/target_launcher.h"

namespace tuner::testing {

/// llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72.
inline const codegen::Target& aarch64_target() {
  static codegen::Target t =
      codegen::Target::parse("llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72");
  return t;
}

}  // namespace tuner::testing

/// Skips the test (reported as skipped by ctest) when aarch64 kernels cannot run here, e.g.
/// "skipped: qemu-aarch64 not found on PATH (install the Debian package qemu-user)".
#define SKIP_WITHOUT_AARCH64_EMULATION()                                                          \
  do {                                                                                            \
    std::string why = ::tuner::measure::launcher_unavailable(::tuner::testing::aarch64_target()); \
    if (!why.empty()) GTEST_SKIP() << "skipped: " << why;                                         \
  } while (0)
