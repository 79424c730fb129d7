#include "codegen/llvm_init.h"

#include <llvm/Support/TargetSelect.h>

#include <mutex>

namespace tuner::codegen {

void init_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
  });
}

}  // namespace tuner::codegen
