// The instruction-set features a compiled artifact needs, checked at load time without LLVM:
// a kernel built for AVX-512 on a CPU without it would die of SIGILL mid-run instead.
#pragma once

#include <string>
#include <vector>

namespace tuner::runtime {

/// Feature names (LLVM's spelling) this runtime can test on the host CPU: every instruction-
/// set extension kernels may use (no system features); empty on non-x86. `tuner run` and the
/// C API check the same list.
const std::vector<std::string>& checkable_cpu_features();

/// Those of `required` this CPU lacks (names it cannot test are ignored), in their order.
std::vector<std::string> host_lacks_cpu_features(const std::vector<std::string>& required);

}  // namespace tuner::runtime
