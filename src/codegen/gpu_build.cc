#include "codegen/gpu_build.h"

#include "codegen/gpu_source.h"
#include "codegen/nvrtc.h"
#include "support/error.h"

namespace tuner::codegen {

int64_t GpuParam::bytes() const {
  int64_t n = dtype.bytes();
  for (auto d : shape) n *= d;
  return n;
}

namespace {

[[noreturn]] void reject(const std::vector<std::string>& problems) {
  std::string msg = "GPU verifier: ";
  for (size_t i = 0; i < problems.size(); ++i) msg += (i ? "; " : "") + problems[i];
  throw GpuLimitError(msg);
}

}  // namespace

std::vector<GpuParam> gpu_params(const schedule::GpuLoweredFunc& f) {
  std::vector<GpuParam> out;
  for (size_t i = 0; i < f.params.size(); ++i) {
    const te::Buffer& b = f.params[i];
    GpuParam::Role role = int(i) < f.num_inputs                 ? GpuParam::Input
                          : int(i) < f.num_inputs + f.num_outputs ? GpuParam::Output
                                                                  : GpuParam::Workspace;
    out.push_back({b->name, b->dtype, b->shape, role});
  }
  return out;
}

schedule::GpuLoweredFunc lower_and_verify_gpu(const schedule::State& state, const Target& target,
                                              const std::string& name, const GpuBuildOptions& opts) {
  USER_CHECK(target.is_cuda()) << "GPU build for a non-cuda target " << target.str();
  schedule::GpuLoweredFunc f = schedule::lower_gpu(state, name, opts.lower);
  if (opts.verify) {
    auto problems = verify_gpu(f, gpu_limits(target));
    if (!problems.empty()) reject(problems);
  }
  return f;
}

GpuSource prepare_gpu_kernel(const schedule::State& state, const Target& target, const std::string& name,
                             const GpuBuildOptions& opts) {
  GpuSource src;
  src.func = lower_and_verify_gpu(state, target, name, opts);
  src.source = emit_gpu_source(src.func, GpuDialect::Cuda);
  return src;
}

GpuBuild build_gpu_kernel(const schedule::State& state, const Target& target, const std::string& name,
                          const GpuBuildOptions& opts) {
  return compile_gpu_kernel(prepare_gpu_kernel(state, target, name, opts), target, name, opts);
}

GpuBuild compile_gpu_kernel(const GpuSource& src, const Target& target, const std::string& name,
                            const GpuBuildOptions& opts) {
  const schedule::GpuLoweredFunc& f = src.func;
  GpuBuild b;
  b.arch = target.arch;
  b.source = src.source;
  NvrtcOutput o = nvrtc_compile(b.source, target.arch, name + ".cu");
  b.ptx = std::move(o.ptx);
  b.cubin = std::move(o.cubin);
  b.compile_seconds = o.seconds;
  b.params = gpu_params(f);
  std::vector<std::string> problems;
  for (auto& k : f.kernels) {
    GpuKernel g;
    g.entry = k.name;
    g.grid = k.grid;
    g.block = k.block;
    for (auto& info : o.kernels)
      if (info.name == k.name) {
        g.registers = info.registers;
        g.shared_bytes = info.shared_bytes;
        g.spill_stores = info.spill_stores;
        g.spill_loads = info.spill_loads;
        g.stack_bytes = info.stack_bytes;
      }
    if (opts.verify) {
      auto p = verify_gpu_registers(k.name, g.registers, k.threads_per_block(), gpu_limits(target));
      problems.insert(problems.end(), p.begin(), p.end());
    }
    b.kernels.push_back(g);
  }
  if (!problems.empty()) reject(problems);
  return b;
}

}  // namespace tuner::codegen
