// How a LocalRunner starts its measurement child for a target's kernels: the native
// tuner-measure-child for this machine's architecture, or the aarch64 build of the same child
// (tuner-measure-child-aarch64, cross-compiled with Debian's aarch64 g++) under qemu-aarch64
// user-mode emulation for aarch64 targets on another host. Same protocol, same sandbox (time
// and memory limits, crashes and timeouts typed alike); only the command differs, so a worker
// serving an emulated board reuses it as is. Timings under emulation are not performance
// figures: such a launcher says so (`emulated`) and names its device "qemu-aarch64".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/target.h"

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

/// The native child (child_path, else locate_measure_child()) for this machine's kernels.
ChildLauncher native_launcher(const std::string& child_path = "");

/// The launcher for kernels of `target`: native when they run on this machine, else the
/// emulated child of their architecture. Throws UserError saying what is missing (and which
/// Debian package provides it) when the target cannot be run here.
ChildLauncher launcher_for(const codegen::Target& target);

/// Empty when launcher_for(target) would succeed; else why not, in one line beginning with
/// what is missing ("qemu-aarch64 not found ...").
std::string launcher_unavailable(const codegen::Target& target);

}  // namespace tuner::measure
