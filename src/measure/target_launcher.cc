#include "measure/target_launcher.h"

#include "support/error.h"

namespace tuner::measure {

std::string launcher_unavailable(const codegen::Target& target) {
  if (!target.is_llvm()) return target.str() + " kernels are not run by a local child";
  return launcher_unavailable_for_arch(target.llvm_arch());
}

ChildLauncher launcher_for(const codegen::Target& target) {
  USER_CHECK(target.is_llvm()) << "kernels for " << target.str()
                               << " are not measured by a local child process";
  return launcher_for_arch(target.llvm_arch(), "kernels for " + target.str());
}

}  // namespace tuner::measure
