#include "measure/child_launcher.h"

#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include "measure/child_process.h"
#include "support/error.h"

namespace tuner::measure {

namespace {

// The aarch64 C and C++ runtime the emulated child (and the kernels' libm calls) load:
// Debian's cross packages install it here (libc6-arm64-cross, libstdc++6-arm64-cross).
constexpr const char* kAarch64Sysroot = "/usr/aarch64-linux-gnu";
// qemu's translation cache and its own heap, besides the guest's memory.
constexpr int64_t kQemuOverheadMb = 1024;

bool is_executable(const std::string& p) { return !p.empty() && access(p.c_str(), X_OK) == 0; }

// `name` on $PATH, or "".
std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::istringstream is(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(is, dir, ':');)
    if (!dir.empty() && is_executable(dir + "/" + name)) return dir + "/" + name;
  return "";
}

struct Emulated {
  ChildLauncher launcher;
  std::string missing;  // empty when launcher is usable
};

Emulated aarch64_launcher() {
  Emulated e;
  std::string qemu = find_on_path("qemu-aarch64");
  if (qemu.empty()) qemu = find_on_path("qemu-aarch64-static");
  if (qemu.empty()) {
    e.missing = "qemu-aarch64 not found on PATH (install the Debian package qemu-user)";
    return e;
  }
  std::string sysroot = kAarch64Sysroot;
  if (access((sysroot + "/lib/ld-linux-aarch64.so.1").c_str(), R_OK) != 0 ||
      access((sysroot + "/lib/libstdc++.so.6").c_str(), R_OK) != 0) {
    e.missing = "the aarch64 C/C++ runtime is missing under " + sysroot +
                " (install the Debian packages libc6-dev-arm64-cross and g++-aarch64-linux-gnu)";
    return e;
  }
#ifdef TUNER_MEASURE_CHILD_AARCH64_PATH
  const std::string build_path = TUNER_MEASURE_CHILD_AARCH64_PATH;
#else
  const std::string build_path;
#endif
  std::string child = find_child_executable("tuner-measure-child-aarch64",
                                            "TUNER_MEASURE_CHILD_AARCH64", build_path);
  if (child.empty()) {
    e.missing =
        "the aarch64 measurement child tuner-measure-child-aarch64 is not built (install the "
        "Debian package g++-aarch64-linux-gnu, then configure and build Tuner again)";
    return e;
  }
  e.launcher.command = {qemu, "-L", sysroot, child};
  e.launcher.arch = "aarch64";
  e.launcher.device = "qemu-aarch64";
  e.launcher.emulated = true;
  e.launcher.overhead_mb = kQemuOverheadMb;
  return e;
}

std::string host_arch() { return codegen::Target::host().llvm_arch(); }

}  // namespace

ChildLauncher native_launcher(const std::string& child_path) {
  ChildLauncher l;
  l.command = {child_path.empty() ? locate_measure_child() : child_path};
  l.arch = host_arch();
  return l;
}

std::string launcher_unavailable(const codegen::Target& target) {
  if (!target.is_llvm()) return target.str() + " kernels are not run by a local child";
  if (target.runs_on_host()) return "";
  if (target.llvm_arch() == "aarch64") return aarch64_launcher().missing;
  return "kernels for " + target.str() + " cannot run on this machine (no emulator for " +
         target.llvm_arch() + ")";
}

ChildLauncher launcher_for(const codegen::Target& target) {
  USER_CHECK(target.is_llvm()) << "kernels for " << target.str()
                               << " are not measured by a local child process";
  if (target.runs_on_host()) return native_launcher();
  USER_CHECK(target.llvm_arch() == "aarch64")
      << "kernels for " << target.str() << " cannot run on this machine (no emulator for "
      << target.llvm_arch() << "; aarch64 targets run under qemu-aarch64)";
  Emulated e = aarch64_launcher();
  USER_CHECK(e.missing.empty()) << "cannot run kernels for " << target.str() << ": " << e.missing;
  return e.launcher;
}

}  // namespace tuner::measure
