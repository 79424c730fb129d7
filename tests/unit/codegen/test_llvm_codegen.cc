// The aliasing facts codegen_llvm hands LLVM: without them LLVM keeps an accumulator's store
// inside every iteration of a reduction loop (the Winograd conv ran 2x slower).
#include <gtest/gtest.h>
#include <llvm/IR/Instructions.h>

#include <atomic>
#include <cstdlib>

#include "codegen/compile.h"
#include "codegen/default_schedule.h"
#include "codegen/llvm_codegen.h"
#include "ops/registry.h"
#include "runtime/thread_pool.h"
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
// scalars and the failure flag are not), and a heap-allocated local buffer is a noalias call
// result.
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
      EXPECT_GE(ptrs, 3) << f.getName().str();  // data, U, output (+ env, failure flag)
      EXPECT_EQ(noalias, ptrs - 2) << f.getName().str() << ": all but env and the flag";
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

namespace {

// A heap that fails after `budget` allocations and counts what is still allocated.
std::atomic<int> g_budget{0}, g_live{0};
void* counted_alloc(int64_t bytes) {
  if (g_budget.fetch_sub(1) <= 0) return nullptr;
  ++g_live;
  return std::malloc(size_t(bytes));
}
void counted_free(void* p) {
  --g_live;
  std::free(p);
}

}  // namespace

// A kernel whose heap buffer cannot be allocated returns TUNER_KERNEL_OUT_OF_MEMORY, having
// freed what it allocated, in the kernel and in its parallel bodies (it wrote through NULL).
TEST(LlvmCodegen, AFailedHeapAllocationReturnsOutOfMemory) {
  auto& def = ops::find_op("winograd_conv");
  auto p = ops::parse_params(def, {"c=64", "h=16", "w=16", "k=64"});
  auto dag = def.build(p);
  auto target = codegen::Target::parse("llvm");
  codegen::CompiledKernel k =
      codegen::compile_kernel(codegen::default_schedule(dag, target).state(), target, "k");
  auto inputs = def.make_inputs(p, dag, 1);
  std::vector<ops::HostTensor> outputs;
  for (auto& t : dag.outputs()) outputs.emplace_back(t->shape, t->dtype);
  std::vector<void*> args;
  for (auto& t : inputs) args.push_back(t.raw());
  for (auto& t : outputs) args.push_back(t.raw());
  runtime::ThreadPool pool(2);
  TunerEnv env = pool.env();
  env.alloc = counted_alloc;
  env.free = counted_free;
  g_budget = 1 << 30;
  ASSERT_EQ(k(args.data(), env), TUNER_KERNEL_OK);
  int needed = (1 << 30) - g_budget;
  ASSERT_GE(needed, 2) << "no heap buffers: the test needs a schedule with some";
  EXPECT_EQ(g_live, 0);
  // Failing the first, a middle and the last allocation.
  for (int budget : {0, needed / 2, needed - 1}) {
    g_budget = budget;
    EXPECT_EQ(k(args.data(), env), TUNER_KERNEL_OUT_OF_MEMORY) << "budget " << budget;
    EXPECT_EQ(g_live, 0) << "budget " << budget << ": buffers leaked";
  }
}
