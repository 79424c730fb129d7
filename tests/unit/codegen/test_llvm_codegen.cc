// The aliasing facts codegen_llvm hands LLVM: without them LLVM keeps an accumulator's store
// inside every iteration of a reduction loop (the Winograd conv ran 2x slower).
#include <gtest/gtest.h>

#include <llvm/IR/Instructions.h>

#include "codegen/default_schedule.h"
#include "codegen/llvm_codegen.h"
#include "ops/registry.h"
#include "schedule/lower.h"

using namespace tuner;

namespace {

// The unoptimized module of an op's fallback kernel.
std::unique_ptr<llvm::Module> fallback_module(llvm::LLVMContext& ctx, const std::string& op,
                                              const std::vector<std::string>& params) {
  auto& def = ops::find_op(op);
  auto dag = def.build(ops::parse_params(def, params));
  auto target = codegen::Target::parse("llvm");
  schedule::Schedule s = codegen::default_schedule(dag, target);
  return codegen::codegen_llvm({schedule::lower(s.state(), "k")}, ctx, "m");
}

}  // namespace

// A parallel loop's body gets every buffer as a noalias parameter (only env and the loop's
// scalars are not), and a heap-allocated local buffer is a noalias call result.
TEST(LlvmCodegen, ParallelBodiesAndHeapBuffersAreNoalias) {
  llvm::LLVMContext ctx;
  // 64 channels over 16x16: V and M of a block of tiles are 36 x 64 x 8 floats, on the heap.
  auto mod = fallback_module(ctx, "winograd_conv", {"c=64", "h=16", "w=16", "k=64"});
  int bodies = 0, heap = 0;
  for (llvm::Function& f : *mod) {
    if (f.getName().ends_with(".par.body")) {
      ++bodies;
      int ptrs = 0, noalias = 0;
      for (llvm::Argument& a : f.args()) {
        if (!a.getType()->isPointerTy()) continue;
        ++ptrs;
        noalias += a.hasNoAliasAttr();
      }
      EXPECT_GE(ptrs, 3) << f.getName().str();  // data, U, output (+ env)
      EXPECT_EQ(noalias, ptrs - 1) << f.getName().str() << ": all but env";
    }
    for (llvm::BasicBlock& b : f)
      for (llvm::Instruction& i : b)
        if (auto* call = llvm::dyn_cast<llvm::CallInst>(&i);
            call && call->isIndirectCall() && call->getType()->isPointerTy()) {
          ++heap;
          EXPECT_TRUE(call->hasRetAttr(llvm::Attribute::NoAlias)) << f.getName().str();
        }
  }
  EXPECT_GE(bodies, 1);
  EXPECT_GE(heap, 2);  // V and M
}
