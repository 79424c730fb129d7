// The GPU design space and its mutators: sampled and mutated traces lower for the GPU (or are
// rejected by the verifier), mutations change the decisions they target.
#include <gtest/gtest.h>

#include <set>

#include "codegen/gpu_build.h"
#include "kernel_check.h"
#include "costmodel/random_model.h"
#include "search/evolutionary.h"
#include "search/mutator.h"
#include "search/space_gpu.h"

namespace tuner::testing {
namespace {

TEST(GpuSpace, CudaTargetsSelectTheGpuRules) {
  EXPECT_TRUE(search::space_options_for(codegen::Target::parse("cuda -arch=sm_90")).gpu);
  EXPECT_FALSE(search::space_options_for(codegen::Target::parse("llvm")).gpu);
}

TEST(GpuSpace, MutatedTracesLowerOrAreRejectedByTheVerifier) {
  auto target = codegen::Target::parse("cuda -arch=sm_80");
  search::SpaceOptions o = search::space_options_for(target);
  std::vector<std::unique_ptr<search::Mutator>> ms;
  ms.push_back(search::make_tile_size_mutator());
  ms.push_back(search::make_unroll_mutator());
  ms.push_back(search::make_thread_binding_mutator());
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"matmul", {"m=64", "n=96", "k=32"}},
      {"softmax", {"shape=8x67"}},
      {"conv2d", {"c=8", "h=9", "w=9", "k=8", "pad=1"}}};
  for (auto& [op, params] : cases) {
    OpCase c(op, params);
    Rng rng(3);
    int mutated[3] = {0, 0, 0}, ok = 0;
    for (int i = 0; i < 60; ++i) {
      auto s = search::generate_gpu_schedule(c.dag, o, uint64_t(i) + 1);
      size_t m = size_t(i % 3);
      search::Decisions d = search::decisions_of(s.trace());
      if (!ms[m]->mutate(s.trace(), d, rng)) continue;
      ++mutated[m];
      auto next = search::generate_gpu_schedule(c.dag, o, 99, &d);
      try {
        codegen::lower_and_verify_gpu(next.state(), target, "k");
        ++ok;
      } catch (const codegen::GpuLimitError&) {
      } catch (const schedule::ScheduleError& e) {
        ADD_FAILURE() << op << ": mutated trace does not lower: " << e.what() << "\n" << next.trace().pretty();
      }
    }
    // Tiled ops have no auto-bound stage: their threads are a tile level (tile_size mutates it).
    if (op != "matmul" && op != "conv2d") {
      EXPECT_GT(mutated[2], 0) << op << ": no thread count to mutate";
    }
    EXPECT_GT(mutated[0], 0) << op;
    EXPECT_GT(ok, 0) << op;
  }
}

TEST(GpuSpace, SearchNeverProposesAGpuProgramTwice) {
  // Candidates are deduplicated by the program the GPU runs (kernels and launch dimensions).
  auto target = codegen::Target::parse("cuda -arch=sm_80");
  OpCase c("matmul", {"m=2", "n=8", "k=2"});  // small: many tilings, few distinct programs
  costmodel::RandomModel model(1);
  search::EvolutionarySearch search(c.dag, search::space_options_for(target), {}, &model, 1);
  std::set<std::string> programs;
  int proposed = 0;
  for (int round = 0; round < 4; ++round) {
    auto cands = search.propose(16);
    std::vector<double> costs;
    for (auto& cand : cands) {
      ++proposed;
      costs.push_back(1e-3);
      std::string p;
      try {
        p = schedule::lower_gpu(cand.state(), "k").str();
      } catch (const std::exception&) {
        continue;  // not a GPU program (the verifier's business)
      }
      EXPECT_TRUE(programs.insert(p).second) << "proposed again:\n" << cand.trace().pretty();
    }
    search.notify(cands, costs);
  }
  EXPECT_GT(proposed, 48);
}

}  // namespace
}  // namespace tuner::testing
