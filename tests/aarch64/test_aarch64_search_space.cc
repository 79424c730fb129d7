// Schedules drawn from the search space with the aarch64 target's vector width (4 float
// lanes), and mutated neighbours, cross-compiled and run under qemu-aarch64, compute the
// reference result: the space's NEON-sized vectors and tiles make correct ARM code.
#include <gtest/gtest.h>

#include "emulated.h"
#include "kernel_check.h"
#include "measure/builder.h"
#include "measure/local_runner.h"
#include "search/mutator.h"
#include "search/space.h"
#include "search/space_gpu.h"

using namespace tuner;
using namespace tuner::testing;

namespace {

void check_space_under_qemu(const OpCase& c, int n) {
  const codegen::Target& target = aarch64_target();
  search::SpaceOptions o = search::space_options_for(target);
  ASSERT_EQ(o.vector_lanes, 4);
  auto tile = search::make_tile_size_mutator();
  Rng rng(1);
  std::vector<schedule::Trace> traces;
  for (int i = 0; i < n; ++i) {
    auto s = search::generate_schedule(c.dag, o, 100 + i);
    traces.push_back(s.trace());
    auto d = search::decisions_of(s.trace());
    if (tile->mutate(s.trace(), d, rng))
      traces.push_back(search::generate_schedule(c.dag, o, 200 + i, &d).trace());
  }
  measure::BuilderOptions bo;
  bo.threads = 2;
  bo.timeout_s = 120;
  bo.build.opt_level = 1;  // compile time dominates; correctness does not depend on it
  measure::Builder builder(bo);
  auto built = builder.build(c.dag, traces, target);

  measure::LocalRunnerOptions ro;
  ro.launcher = measure::launcher_for(target);
  ro.threads = 2;  // the space's parallel loops are outermost: few hand-offs
  ro.repeats = 1;
  ro.warmup = 0;
  ro.min_repeat_ms = 0;
  ro.flush_cache = false;
  ro.give_up_factor = 0;
  ro.timeout_s = 60;
  ro.rtol = ro.atol = 1e-4;
  measure::LocalRunner runner(ro);
  measure::MeasureTask task;
  task.dag = c.dag;
  task.target = target;
  task.inputs = c.inputs;
  task.expected = c.expected;
  auto results = runner.run(task, built);
  ASSERT_EQ(results.size(), traces.size());
  for (size_t k = 0; k < results.size(); ++k)
    EXPECT_TRUE(results[k].ok()) << c.str() << " #" << k << ": " << results[k].str() << "\n"
                                 << traces[k].pretty();
  std::printf("%s: %zu search-space schedules checked under %s\n", c.str().c_str(), traces.size(),
              runner.launcher().device.c_str());
}

}  // namespace

TEST(Aarch64SearchSpace, DenseWithEpilogue) {
  SKIP_WITHOUT_AARCH64_EMULATION();
  check_space_under_qemu(OpCase("dense", {"m=12", "n=40", "k=33"}), 10);
}

TEST(Aarch64SearchSpace, Conv2d) {
  SKIP_WITHOUT_AARCH64_EMULATION();
  check_space_under_qemu(OpCase("conv2d", {"c=4", "h=10", "w=10", "k=8", "pad=1", "bias=1"}), 10);
}

TEST(Aarch64SearchSpace, Softmax) {
  SKIP_WITHOUT_AARCH64_EMULATION();
  check_space_under_qemu(OpCase("softmax", {"shape=6x70"}), 10);
}
