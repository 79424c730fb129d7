// The inline vector exp/erf/tanh/sigmoid of vector_math.h, through a vectorized kernel, on
// special and ordinary values against the C library (float results, double references).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "codegen/compile.h"
#include "codegen/default_schedule.h"
#include "ops/registry.h"
#include "runtime/thread_pool.h"

namespace tuner::codegen {

namespace {

std::vector<float> inputs() {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {-inf, -200.f, -104.f, -103.9f, -100.f, -90.f, -87.5f, -87.f, -30.f,
                          -5.f, -1.f,   -0.5f,  -1e-3f,  -1e-7f,  0.f,    1e-7f,  1e-3f,  0.5f,
                          1.f,  2.5f,   5.f,    10.f,    30.f,    88.f,   88.7f,  88.8f,  89.f,
                          200.f, inf,   std::numeric_limits<float>::quiet_NaN()};
  for (int i = 0; v.size() % 16 != 0 || i < 100; ++i) v.push_back(-20.f + 0.37f * float(i));
  return v;
}

// Runs the op `name` (fallback schedule: its loop vectorized) on the inputs, compiled for
// `target`: the host's (AVX-512 here: 14-bit reciprocal estimates) or AVX2's (12-bit).
std::vector<float> run(const std::string& name, const std::vector<float>& x,
                       const std::string& target_name) {
  const ops::OpDef& def = ops::find_op(name);
  ops::Params p = ops::parse_params(def, {"shape=" + std::to_string(x.size())});
  te::ComputeDAG dag = def.build(p);
  Target target = Target::parse(target_name);
  CompiledKernel k = compile_kernel(default_schedule(dag, target).state(), target, "k");
  EXPECT_NE(k.lowered.str().find("ramp("), std::string::npos) << "not vectorized: " << k.lowered.str();
  std::vector<float> in = x, out(x.size());
  void* args[] = {in.data(), out.data()};
  runtime::ThreadPool pool(1);
  TunerEnv env = pool.env();
  EXPECT_EQ(k.fn(args, &env), 0);
  return out;
}

void expect_close_on(const std::string& target, const std::string& name, double (*ref)(double),
                     double abs_tol, double rel_tol) {
  std::vector<float> x = inputs(), y = run(name, x, target);
  for (size_t i = 0; i < x.size(); ++i) {
    double want = double(float(ref(double(x[i]))));  // rounded to float: inf past FLT_MAX
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(y[i])) << name << "(" << x[i] << ") = " << y[i];
    } else if (std::isinf(want)) {
      EXPECT_EQ(double(y[i]), want) << name << "(" << x[i] << ")";
    } else if (std::fabs(want) < std::numeric_limits<float>::min()) {
      // Subnormal: exact, or flushed to zero where the CPU's mode does so.
      EXPECT_LE(std::fabs(double(y[i]) - want), double(std::numeric_limits<float>::min()))
          << name << "(" << x[i] << ")";
    } else {
      EXPECT_NEAR(double(y[i]), want, abs_tol + rel_tol * std::fabs(want))
          << name << "(" << x[i] << ")";
    }
  }
}

void expect_close(const std::string& name, double (*ref)(double), double abs_tol, double rel_tol) {
  for (const char* target : {"llvm", "llvm -mcpu=haswell"}) {
    SCOPED_TRACE(target);
    expect_close_on(target, name, ref, abs_tol, rel_tol);
  }
}

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

}  // namespace

TEST(VectorMath, ExpIsAccurateOverItsWholeRange) {
  expect_close("exp", [](double x) { return std::exp(x); }, 0, 1e-6);
}
TEST(VectorMath, Erf) { expect_close("erf", [](double x) { return std::erf(x); }, 3e-7, 1e-6); }
TEST(VectorMath, Tanh) { expect_close("tanh", [](double x) { return std::tanh(x); }, 3e-7, 1e-6); }
TEST(VectorMath, Sigmoid) { expect_close("sigmoid", sigmoid, 3e-7, 1e-6); }

}  // namespace tuner::codegen

namespace tuner::codegen {

// The sigmoid's divide is the reciprocal estimate plus a Newton step on x86 and AArch64 (a
// divide there costs 3-4x the rest of SiLU); the test above bounds its error.
TEST(VectorMath, SigmoidUsesTheReciprocalEstimate) {
  const ops::OpDef& def = ops::find_op("sigmoid");
  te::ComputeDAG dag = def.build(ops::parse_params(def, {"shape=64"}));
  CompileOptions opts;
  opts.build.keep_asm = true;
  for (auto [target, estimate] : {std::pair{"llvm -mcpu=skylake-avx512", "vrcp14ps"},
                                  {"llvm -mcpu=haswell", "vrcpps"},
                                  {"llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1", "frecpe"}}) {
    Target t = Target::parse(target);
    std::string text = build_kernel(default_schedule(dag, t).state(), t, "k", opts).assembly;
    EXPECT_NE(text.find(estimate), std::string::npos) << target;
    EXPECT_EQ(text.find("div"), std::string::npos) << target;
  }
}

}  // namespace tuner::codegen
