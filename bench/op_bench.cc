// Single operators under their fallback schedule against vendor libraries measured in the
// same run: matmul 1024^3 vs OpenBLAS sgemm; conv2d (1,64,56,56)x(64,64,3,3) pad 1 (KCRS and
// packed weights) and the ResNet-18 conv layers (packed) vs oneDNN with its own best layout
// (format_tag::any, inputs reordered once outside the timing).
//   build/bench/op_bench [--threads 2] [--seconds 1] [--db tuning.db]
// With --db, Tuner uses the best record of each workload in that database (else fallback).
#include <cblas.h>
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <unistd.h>
#include <vector>

#include "codegen/compile.h"
#include "codegen/default_schedule.h"
#include "ops/registry.h"
#include "runtime/thread_pool.h"
#include "db/sqlite_database.h"
#include "graph/passes.h"

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
    schedule::Schedule sched = codegen::default_schedule(dag, target);
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

// Median seconds of oneDNN's direct convolution (1,c,hw,hw) x (k,c,kernel,kernel) with its
// own best layouts (format_tag::any; inputs reordered once outside the timing).
double dnnl_conv_seconds(int64_t c, int64_t hw, int64_t k, int64_t kernel, int64_t stride,
                         int64_t pad, double budget) {
  using namespace dnnl;
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  int64_t out = (hw + 2 * pad - kernel) / stride + 1;
  memory::dims src_d{1, c, hw, hw}, w_d{k, c, kernel, kernel}, dst_d{1, k, out, out};
  auto any = memory::format_tag::any;
  memory::desc src_any(src_d, memory::data_type::f32, any), w_any(w_d, memory::data_type::f32, any),
      dst_any(dst_d, memory::data_type::f32, any);
  auto pd = convolution_forward::primitive_desc(
      convolution_forward::desc(prop_kind::forward_inference, algorithm::convolution_direct,
                                src_any, w_any, dst_any, {stride, stride}, {pad, pad}, {pad, pad}),
      eng);
  memory src(pd.src_desc(), eng), w(pd.weights_desc(), eng), dst(pd.dst_desc(), eng);
  for (memory* m : {&src, &w}) {
    float* p = static_cast<float*>(m->get_data_handle());
    size_t n = m->get_desc().get_size() / sizeof(float);
    for (size_t i = 0; i < n; ++i) p[i] = float(i % 7) * 0.1f;
  }
  convolution_forward conv(pd);
  return time_median([&] {
    conv.execute(s, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, dst}});
    s.wait();
  }, budget);
}

// OpenBLAS picks its kernel from the CPU model it knows, or from OPENBLAS_CORETYPE; 0.3.21
// does not know newer AVX-512 CPUs (AMD Zen 5) and runs its AVX2 Haswell kernel there (some
// hosts also set OPENBLAS_CORETYPE=Haswell), half the speed of its AVX-512 kernel. The kernel
// is fixed when the library loads, so the benchmark restarts itself once with the AVX-512
// kernel: the peer is measured at its best.
void use_best_openblas_kernel(char** argv) {
  if (std::getenv("OP_BENCH_RESTARTED") || !__builtin_cpu_supports("avx512f")) return;
  std::string core = openblas_get_corename();
  if (core == "SkylakeX" || core == "Cooperlake" || core == "sapphirerapids") return;
  fmt::print("OpenBLAS chose its {} kernel on an AVX-512 CPU: restarting with SkylakeX\n", core);
  std::fflush(stdout);
  setenv("OPENBLAS_CORETYPE", "SkylakeX", 1);
  setenv("OP_BENCH_RESTARTED", "1", 1);
  execv("/proc/self/exe", argv);
  fmt::print(stderr, "op_bench: could not restart with OPENBLAS_CORETYPE=SkylakeX\n");
}

}  // namespace

int main(int argc, char** argv) {
  use_best_openblas_kernel(argv);
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
    fmt::print("{:<44} {:>7.1f} GF {:>7.1f} GF {:>7.2f}x   (peer: OpenBLAS sgemm, {} kernel)\n",
               "matmul 1024x1024x1024 (" + op.source + ")", f / t_tuner / 1e9, f / t_blas / 1e9,
               t_blas / t_tuner, openblas_get_corename());
    // B packed in column panels, the layout `tuner compile` gives a constant B (its packing is
    // done once, at compile time); the peer's time is the same plain sgemm.
    TunerOp packed("matmul", {"m=1024", "n=1024", "k=1024", "wblock=32"}, db_path);
    double t_packed = time_median([&] { packed.kernel(packed.args.data(), env); }, budget);
    fmt::print("{:<44} {:>7.1f} GF {:>7.1f} GF {:>7.2f}x   (peer: OpenBLAS sgemm, {} kernel)\n",
               "matmul 1024x1024x1024 (" + packed.source + ", packed 32)", f / t_packed / 1e9,
               f / t_blas / 1e9, t_blas / t_packed, openblas_get_corename());
  }

  // conv2d vs oneDNN: the example layer in KCRS and packed, then the ResNet-18 layers packed
  // (the layout `tuner compile` gives convolutions on this target).
  auto host = codegen::Target::parse("llvm");
  struct Conv {
    int64_t c, hw, k, kernel, stride, pad, wblock;  // wblock -1: the block compile gives
  };
  std::vector<Conv> convs = {{64, 56, 64, 3, 1, 1, 0},   {64, 56, 64, 3, 1, 1, -1},
                             {64, 56, 128, 3, 2, 1, -1}, {128, 28, 128, 3, 1, 1, -1},
                             {256, 14, 256, 3, 1, 1, -1}, {512, 7, 512, 3, 1, 1, -1},
                             {3, 224, 64, 7, 2, 3, -1}};
  for (Conv& cv : convs)
    if (cv.wblock < 0)
      cv.wblock = graph::conv_weight_block(cv.k, (cv.hw + 2 * cv.pad - cv.kernel) / cv.stride + 1,
                                           host.vector_lanes(), host.vector_registers());
  double log_sum = 0;
  int packed = 0;
  for (const Conv& cv : convs) {
    auto str = [](int64_t v) { return std::to_string(v); };
    TunerOp op("conv2d", {"n=1", "c=" + str(cv.c), "h=" + str(cv.hw), "w=" + str(cv.hw),
                          "k=" + str(cv.k), "kh=" + str(cv.kernel), "kw=" + str(cv.kernel),
                          "stride=" + str(cv.stride), "pad=" + str(cv.pad),
                          "wblock=" + str(cv.wblock)}, db_path);
    double t_tuner = time_median([&] { op.kernel(op.args.data(), env); }, budget);
    double t_dnnl = dnnl_conv_seconds(cv.c, cv.hw, cv.k, cv.kernel, cv.stride, cv.pad, budget);
    double f = op.dag.flops();
    std::string name = fmt::format("conv {}->{} {}x{} k{} s{} ({}{})", cv.c, cv.k, cv.hw, cv.hw,
                                   cv.kernel, cv.stride, op.source,
                                   cv.wblock ? ", packed " + str(cv.wblock) : ", KCRS");
    fmt::print("{:<44} {:>7.1f} GF {:>7.1f} GF {:>7.2f}x   (peer: oneDNN, best layout)\n", name,
               f / t_tuner / 1e9, f / t_dnnl / 1e9, t_dnnl / t_tuner);
    if (cv.wblock) {  // the six ResNet-18 layers, packed
      log_sum += std::log(t_dnnl / t_tuner);
      ++packed;
    }
  }
  fmt::print("{:<44} {:>31.2f}x\n", "ResNet-18 conv layers, geometric mean", std::exp(log_sum / packed));
  fmt::print("threads {}, median of repeats over >= {} s each; ratio = peer time / Tuner time\n",
             threads, budget);
  return 0;
}
