// Single operators under their fallback schedule against vendor libraries measured in the
// same run: matmul 1024^3 vs OpenBLAS sgemm, conv2d (1,64,56,56)x(64,64,3,3) pad 1 vs oneDNN
// with its own best layout (format_tag::any, inputs reordered once outside the timing).
//   build/bench/op_bench [--threads 2] [--seconds 1] [--db tuning.db]
// With --db, Tuner uses the best record of each workload in that database (else fallback).
#include <cblas.h>
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <vector>

#include "codegen/compile.h"
#include "ops/registry.h"
#include "runtime/thread_pool.h"
#include "db/sqlite_database.h"
#include "schedule/fallback.h"

using namespace tuner;

namespace {

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Median time of f over repeats lasting at least `budget` seconds, after a warm-up.
double time_median(const std::function<void()>& f, double budget) {
  for (int i = 0; i < 3; ++i) f();
  std::vector<double> t;
  double start = seconds_now();
  while (t.size() < 5 || seconds_now() - start < budget) {
    double s = seconds_now();
    f();
    t.push_back(seconds_now() - s);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct TunerOp {
  ops::OpDef const* def;
  ops::Params params;
  te::ComputeDAG dag;
  codegen::CompiledKernel kernel;
  std::vector<ops::HostTensor> inputs, outputs;
  std::vector<void*> args;

  std::string source = "fallback";

  TunerOp(const std::string& op, const std::vector<std::string>& p, const std::string& db_path)
      : def(&ops::find_op(op)), params(ops::parse_params(*def, p)), dag(def->build(params)) {
    auto target = codegen::Target::parse("llvm");
    schedule::FallbackOptions fo;
    fo.vector_lanes = target.vector_lanes();
    schedule::Schedule sched = schedule::fallback_schedule(dag, fo);
    if (!db_path.empty()) {
      db::SqliteOptions o;
      o.mode = db::OpenMode::ReadOnly;
      auto db = db::SqliteDatabase::open(db_path, o);
      if (auto w = db->find_workload(dag.hash_hex())) {
        auto best = db->top_k(w->id, target.str(), 1);
        if (!best.empty()) {
          sched = schedule::Schedule::replay(dag, schedule::Trace::from_json(Json::parse(best[0].trace)));
          source = "tuned";
        }
      }
    }
    kernel = codegen::compile_kernel(sched.state(), target, "k");
    inputs = def->make_inputs(params, dag, 1);
    for (auto& t : dag.outputs()) outputs.emplace_back(t->shape, t->dtype);
    for (auto& t : inputs) args.push_back(t.raw());
    for (auto& t : outputs) args.push_back(t.raw());
  }
};

}  // namespace

int main(int argc, char** argv) {
  int threads = 2;
  double budget = 1.0;
  std::string db_path;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--db")) db_path = argv[i + 1];
    if (!std::strcmp(argv[i], "--threads")) threads = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--seconds")) budget = std::atof(argv[i + 1]);
  }
  setenv("OMP_NUM_THREADS", std::to_string(threads).c_str(), 1);
  openblas_set_num_threads(threads);
  runtime::ThreadPool pool(threads);
  TunerEnv env = pool.env();
  fmt::print("{:<44} {:>10} {:>10} {:>8}\n", "workload (schedule)", "Tuner", "peer", "ratio");

  {  // matmul vs OpenBLAS
    const int M = 1024, N = 1024, K = 1024;
    TunerOp op("matmul", {"m=1024", "n=1024", "k=1024"}, db_path);
    double t_tuner = time_median([&] { op.kernel(op.args.data(), env); }, budget);
    std::vector<float> C(M * N);
    const float* A = op.inputs[0].data<float>();
    const float* B = op.inputs[1].data<float>();
    double t_blas = time_median([&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.f, A, K, B, N, 0.f, C.data(), N);
    }, budget);
    double f = op.dag.flops();
    fmt::print("{:<44} {:>7.1f} GF {:>7.1f} GF {:>7.2f}x   (peer: OpenBLAS sgemm)\n",
               "matmul 1024x1024x1024 (" + op.source + ")", f / t_tuner / 1e9, f / t_blas / 1e9, t_blas / t_tuner);
  }

  {  // conv2d vs oneDNN
    TunerOp op("conv2d", {"n=1", "c=64", "h=56", "w=56", "k=64", "kh=3", "kw=3", "stride=1", "pad=1"}, db_path);
    double t_tuner = time_median([&] { op.kernel(op.args.data(), env); }, budget);
    using namespace dnnl;
    engine eng(engine::kind::cpu, 0);
    stream s(eng);
    memory::dims src_d{1, 64, 56, 56}, w_d{64, 64, 3, 3}, dst_d{1, 64, 56, 56};
    auto any = memory::format_tag::any;
    memory::desc src_any(src_d, memory::data_type::f32, any), w_any(w_d, memory::data_type::f32, any),
        dst_any(dst_d, memory::data_type::f32, any);
    auto pd = convolution_forward::primitive_desc(
        convolution_forward::desc(prop_kind::forward_inference, algorithm::convolution_direct,
                                  src_any, w_any, dst_any, {1, 1}, {1, 1}, {1, 1}),
        eng);
    memory src_user({src_d, memory::data_type::f32, memory::format_tag::nchw}, eng, op.inputs[0].raw());
    memory w_user({w_d, memory::data_type::f32, memory::format_tag::oihw}, eng, op.inputs[1].raw());
    memory src(pd.src_desc(), eng), w(pd.weights_desc(), eng), dst(pd.dst_desc(), eng);
    reorder(src_user, src).execute(s, src_user, src);
    reorder(w_user, w).execute(s, w_user, w);
    s.wait();
    convolution_forward conv(pd);
    double t_dnnl = time_median([&] {
      conv.execute(s, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, dst}});
      s.wait();
    }, budget);
    double f = op.dag.flops();
    fmt::print("{:<44} {:>7.1f} GF {:>7.1f} GF {:>7.2f}x   (peer: oneDNN, best layout)\n",
               "conv2d 1x64x56x56, 64x64x3x3, p1 (" + op.source + ")", f / t_tuner / 1e9, f / t_dnnl / 1e9,
               t_dnnl / t_tuner);
  }
  fmt::print("threads {}, median of repeats over >= {} s each; ratio = peer time / Tuner time\n",
             threads, budget);
  return 0;
}
