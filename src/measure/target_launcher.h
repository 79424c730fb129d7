// The codegen::Target front end of child_launcher.h: which child runs a target's kernels
// here (native, or the aarch64 child under qemu-aarch64).
#pragma once

#include <string>

#include "codegen/target.h"
#include "measure/child_launcher.h"

namespace tuner::measure {

/// The launcher for kernels of `target`: native when they run on this machine, else the
/// emulated child of their architecture. Throws UserError saying what is missing (and which
/// Debian package provides it) when the target cannot be run here.
ChildLauncher launcher_for(const codegen::Target& target);

/// Empty when launcher_for(target) would succeed; else why not, in one line beginning with
/// what is missing ("qemu-aarch64 not found ...").
std::string launcher_unavailable(const codegen::Target& target);

}  // namespace tuner::measure
