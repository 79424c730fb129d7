// How a runner starts its measurement child for a target's kernels: the native
// tuner-measure-child for this machine's architecture, or the aarch64 build of the same child
// (tuner-measure-child-aarch64, cross-compiled with Debian's aarch64 g++) under qemu-aarch64
// user-mode emulation for aarch64 kernels on another host. Same protocol, same sandbox (time
// and memory limits, crashes and timeouts typed alike); only the command differs. Timings under
// emulation are not performance figures: such a launcher says so (`emulated`) and names its
// device "qemu-aarch64".
//
// Part of the compiler-free tuner_sandbox: it knows architectures by name, not codegen
// targets, so tuner-worker (no LLVM) picks its launcher here; target_launcher.h adds the
// codegen::Target front end for the tuner and the server.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tuner::measure {

struct ChildLauncher {
  /// The command before the child's own arguments: {child} or {qemu, "-L", sysroot, child}.
  std::vector<std::string> command;
  /// LLVM's name of the architecture of the kernels the child loads ("x86_64", "aarch64").
  std::string arch;
  /// Where measurements come from, as stored in records' worker field: "local" or
  /// "qemu-aarch64" (emulated).
  std::string device = "local";
  /// True when the child runs under an emulator: results are checked, timings meaningless.
  bool emulated = false;
  /// Address space the emulator needs besides the guest's, MiB. The emulator ignores the
  /// guest's setrlimit(RLIMIT_AS), so the runner limits the emulator's process to the memory
  /// limit plus this.
  int64_t overhead_mb = 0;
};

/// LLVM's name of this machine's architecture ("x86_64", "aarch64"), known at compile time.
std::string host_arch();

/// The architecture of an llvm target string's -mtriple ("aarch64" for "llvm
/// -mtriple=aarch64-linux-gnu ..."), this machine's when it has none; empty for other kinds
/// (cuda). A light reading without LLVM, for the worker: the server parses targets fully.
std::string target_arch(const std::string& target);

/// The native child (child_path, else locate_measure_child()) for this machine's kernels.
ChildLauncher native_launcher(const std::string& child_path = "");

/// Empty when launcher_for_arch(arch) would succeed; else why not, in one line beginning
/// with what is missing ("qemu-aarch64 not found ...").
std::string launcher_unavailable_for_arch(const std::string& arch);

/// The launcher for kernels of `arch`: native on this architecture, else the emulated child
/// of that architecture. Throws UserError saying what is missing (and which Debian package
/// provides it); `what` names the kernels in the message ("kernels for <target>").
ChildLauncher launcher_for_arch(const std::string& arch, const std::string& what);

}  // namespace tuner::measure
