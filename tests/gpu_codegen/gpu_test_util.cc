#include "gpu_test_util.h"

#include "codegen/nvrtc.h"

namespace tuner::testing {

std::string nvrtc_missing() {
  return codegen::nvrtc_available() ? "" : "NVRTC (Tuner was built without the CUDA toolkit)";
}

std::string compare_outputs(const OpCase& c, const std::vector<ops::HostTensor>& outs, double rtol,
                            double atol) {
  if (outs.size() != c.expected.size()) return "wrong number of outputs";
  for (size_t i = 0; i < outs.size(); ++i) {
    auto r = ops::compare(outs[i], c.expected[i], rtol, atol);
    if (!r.ok) return "output " + std::to_string(i) + ": " + r.message;
  }
  return "";
}

const std::vector<std::string>& gpu_archs() {
  static const std::vector<std::string> a = {"sm_80", "sm_90"};
  return a;
}

}  // namespace tuner::testing
