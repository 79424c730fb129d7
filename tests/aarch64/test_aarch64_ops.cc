// Acceptance (issue 10): every operator of the library, under its fallback schedule (all its
// shape sets) and under 20 random traces (its main shape set), cross-compiled for aarch64 and
// run under qemu-aarch64 by the emulated LocalRunner, matches its naive reference computed on
// this host. Skipped, saying what is missing, without qemu-aarch64 or the aarch64 child.
#include <gtest/gtest.h>

#include <set>

#include "codegen/default_schedule.h"
#include "emulated.h"
#include "kernel_check.h"
#include "measure/builder.h"
#include "measure/local_runner.h"
#include "op_cases.h"
#include "random_schedule.h"
#include "support/hash.h"

using namespace tuner;
using namespace tuner::testing;

namespace {

constexpr int kRandomTraces = 20;

measure::LocalRunnerOptions emulated_options(int threads) {
  measure::LocalRunnerOptions o;
  o.launcher = measure::launcher_for(aarch64_target());
  o.threads = threads;
  o.repeats = 1;  // only correctness matters here: one checked call, one timed call
  o.warmup = 0;
  o.min_repeat_ms = 0;
  o.flush_cache = false;
  o.give_up_factor = 0;
  o.timeout_s = 60;
  o.rtol = 1e-4;
  o.atol = 1e-4;
  return o;
}

class Aarch64Ops : public ::testing::TestWithParam<std::string> {};

TEST_P(Aarch64Ops, FallbackAndRandomTracesMatchReference) {
  SKIP_WITHOUT_AARCH64_EMULATION();
  const std::string& op = GetParam();
  auto it = op_cases().find(op);
  ASSERT_NE(it, op_cases().end()) << "no shape sets for op " << op
                                  << ": add them to tests/correctness/op_cases.cc";
  const codegen::Target& target = aarch64_target();
  measure::LocalRunner runner(emulated_options(2));
  ASSERT_TRUE(runner.launcher().emulated);
  // Random traces may put a parallel loop deep inside others: a hand-off between threads per
  // inner iteration, cheap natively, very slow under qemu (a trace of abs: 60 s with two
  // threads, 0.3 s with one). With one thread the same outlined parallel code runs inline.
  measure::LocalRunner random_runner(emulated_options(1));
  measure::BuilderOptions bo;
  bo.threads = 2;
  bo.timeout_s = 120;
  measure::Builder fallback_builder(bo);  // O3, as compiled for real
  // Random traces (big unrolls among them) at O1: compile time dominates, correctness does
  // not depend on it.
  bo.build.opt_level = 1;
  measure::Builder random_builder(bo);
  ASSERT_EQ(target.vector_lanes(), 4);

  for (size_t ci = 0; ci < it->second.size(); ++ci) {
    OpCase c(op, it->second[ci]);
    std::vector<schedule::Trace> traces{codegen::default_schedule(c.dag, target).trace()};
    std::vector<std::string> labels{"fallback"};
    if (ci == 0) {
      uint64_t seed0 = fnv1a64(op) % 100000;
      for (int t = 0; t < kRandomTraces; ++t) {
        traces.push_back(random_schedule(c.dag, seed0 + t, 12).trace());
        labels.push_back("random trace #" + std::to_string(t));
      }
    }
    auto built = fallback_builder.build(c.dag, {traces[0]}, target);
    if (traces.size() > 1) {
      auto more = random_builder.build(
          c.dag, std::vector<schedule::Trace>(traces.begin() + 1, traces.end()), target);
      built.insert(built.end(), more.begin(), more.end());
    }
    measure::MeasureTask task;
    task.dag = c.dag;
    task.target = target;
    task.inputs = c.inputs;
    task.expected = c.expected;
    auto results = runner.run(task, {built[0]});
    if (built.size() > 1) {
      auto more = random_runner.run(
          task, std::vector<measure::BuiltCandidate>(built.begin() + 1, built.end()));
      results.insert(results.end(), more.begin(), more.end());
    }
    std::set<uint64_t> programs;
    for (size_t k = 0; k < results.size(); ++k) {
      programs.insert(built[k].program_hash);
      EXPECT_TRUE(results[k].ok())
          << c.str() << " " << labels[k] << ": " << results[k].str() << "\n"
          << traces[k].pretty();
    }
    if (ci == 0) {
      // The random traces really are different programs (not 20 times the same loop nest).
      EXPECT_GE(programs.size(), 4u) << c.str();
      std::printf("%s: fallback + %d random traces, %zu distinct programs, checked under %s\n",
                  c.str().c_str(), kRandomTraces, programs.size(),
                  runner.launcher().device.c_str());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, Aarch64Ops, ::testing::ValuesIn(all_op_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
