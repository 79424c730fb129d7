// The emulated runner keeps the native sandbox's guarantees: faulty aarch64 kernels (the
// fixtures of unit/measure, cross-built) get the same typed errors under qemu-aarch64, the
// runner goes on with good candidates, and no child is left behind. Also: a kernel loaded
// after another one is really the new kernel (an emulator must not run stale translations of
// the unloaded one, likely mapped at the same address).
#include <gtest/gtest.h>

#include <chrono>

#include "emulated.h"
#include "measure/local_runner.h"
#include "ops/registry.h"
#include "schedule/schedule.h"
#include "unit/measure/measure_test_util.h"

using namespace tuner;
using namespace tuner::testing;
using db::MeasureStatus;

namespace {

measure::LocalRunnerOptions sandbox_options() {
  measure::LocalRunnerOptions o;
  o.launcher = measure::launcher_for(aarch64_target());
  o.timeout_s = 3;
  o.memory_limit_mb = 512;
  o.min_repeat_ms = 1;
  o.give_up_factor = 0;
  return o;
}

// No expected outputs given: the runner computes them as a worker would, with the
// untransformed schedule cross-compiled and run under qemu.
measure::MeasureTask aarch64_task(te::ComputeDAG dag) {
  measure::MeasureTask t = measure::test::task_of(std::move(dag));
  t.target = aarch64_target();
  return t;
}

}  // namespace

TEST(Aarch64Sandbox, FaultsAreTypedUnderEmulation) {
  SKIP_WITHOUT_AARCH64_EMULATION();
  struct Fault {
    const char* fixture;
    MeasureStatus status;
    const char* message;
  };
  const Fault faults[] = {
      {"segv", MeasureStatus::RuntimeDevice, "SIGSEGV"},
      {"hang", MeasureStatus::RunTimeout, "within 3 s"},
      {"oom", MeasureStatus::RuntimeDevice, "out of memory"},
      {"wrong", MeasureStatus::WrongAnswer, "output 0"},
      {"error_code", MeasureStatus::RuntimeDevice, "failed with code 7"},
      {"abort", MeasureStatus::RuntimeDevice, "SIGABRT"},
      {"overflow", MeasureStatus::RuntimeDevice, "SIGSEGV"},     // guard page after outputs
      {"write_input", MeasureStatus::RuntimeDevice, "SIGSEGV"},  // inputs are read-only
  };
  {
    measure::LocalRunner runner(sandbox_options());
    measure::MeasureTask task = aarch64_task(measure::test::add_dag());
    auto first = runner.run(task, {measure::test::fixture("good")});
    ASSERT_TRUE(first[0].ok()) << first[0].str();
    for (const Fault& f : faults) {
      int started = runner.children_started();
      auto r =
          runner.run(task, {measure::test::fixture(f.fixture), measure::test::fixture("good")});
      ASSERT_EQ(r.size(), 2u);
      EXPECT_EQ(r[0].status, f.status) << f.fixture << ": " << r[0].str();
      EXPECT_NE(r[0].error.find(f.message), std::string::npos) << f.fixture << ": " << r[0].str();
      EXPECT_TRUE(r[1].ok()) << "after " << f.fixture << ": " << r[1].str();
      EXPECT_EQ(runner.children_started(), started + 1) << f.fixture;
      EXPECT_EQ(measure::test::child_pids().size(), 1u) << f.fixture;
      std::printf("  %-11s -> %s\n", f.fixture, r[0].str().c_str());
    }
  }
  EXPECT_TRUE(measure::test::child_pids().empty());
}

// Two kernels of identical layout (add and sub over the same shapes) measured one after the
// other in one child, against add's outputs: the second must fail.
TEST(Aarch64Sandbox, ASecondKernelIsNotTheFirstOnesStaleCode) {
  SKIP_WITHOUT_AARCH64_EMULATION();
  auto dag_of = [](const char* op) {
    const auto& def = ops::find_op(op);
    return def.build(ops::parse_params(def, {"a=256", "b=256"}));
  };
  measure::Builder builder;
  measure::LocalRunner runner(sandbox_options());
  measure::MeasureTask task = aarch64_task(dag_of("add"));
  for (int round = 0; round < 3; ++round) {
    auto add =
        builder.build(dag_of("add"), {schedule::Schedule(dag_of("add")).trace()}, aarch64_target());
    auto sub =
        builder.build(dag_of("sub"), {schedule::Schedule(dag_of("sub")).trace()}, aarch64_target());
    auto r = runner.run(task, {add[0], sub[0]});
    ASSERT_TRUE(r[0].ok()) << r[0].str();
    EXPECT_EQ(r[1].status, MeasureStatus::WrongAnswer) << "round " << round << ": " << r[1].str();
  }
}
