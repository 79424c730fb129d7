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

}  // namespace

std::string host_arch() {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#else
#error "tuner_sandbox: unknown host architecture (add its LLVM name here)"
#endif
}

std::string target_arch(const std::string& target) {
  std::istringstream is(target);
  std::string tok;
  if (!(is >> tok) || tok != "llvm") return "";
  while (is >> tok) {
    if (tok.rfind("-mtriple=", 0) != 0) continue;
    std::string arch = tok.substr(9, tok.find('-', 9) - 9);
    // The aliases LLVM normalizes (Triple::normalize).
    if (arch == "arm64") return "aarch64";
    if (arch == "amd64" || arch == "x86-64") return "x86_64";
    return arch;
  }
  return host_arch();
}

ChildLauncher native_launcher(const std::string& child_path) {
  ChildLauncher l;
  l.command = {child_path.empty() ? locate_measure_child() : child_path};
  l.arch = host_arch();
  return l;
}

std::string launcher_unavailable_for_arch(const std::string& arch) {
  if (arch == host_arch()) return "";
  if (arch == "aarch64") return aarch64_launcher().missing;
  return "no emulator for " + arch + " kernels on this " + host_arch() +
         " machine (aarch64 kernels run under qemu-aarch64)";
}

ChildLauncher launcher_for_arch(const std::string& arch, const std::string& what) {
  if (arch == host_arch()) return native_launcher();
  USER_CHECK(arch == "aarch64") << what << " cannot run on this machine (no emulator for "
                                << arch << "; aarch64 targets run under qemu-aarch64)";
  Emulated e = aarch64_launcher();
  USER_CHECK(e.missing.empty()) << "cannot run " << what << ": " << e.missing;
  return e.launcher;
}

}  // namespace tuner::measure
