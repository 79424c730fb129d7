// `tuner op build OP ... --target "cuda -arch=sm_90"`: lowers an operator for the GPU with
// its schedule (best record, --trace, else the GPU fallback), verifies it, compiles the CUDA C
// with NVRTC and prints the kernels' launch dimensions, registers, shared memory and spills
// (--source: the CUDA C, --opencl: the OpenCL C). `--random N` instead samples N candidates of
// the GPU design space: the share the verifier rejects and the median NVRTC time per
// candidate (bench/RESULTS.md, "CUDA").
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "cli/op_common.h"
#include "codegen/gpu_build.h"
#include "codegen/gpu_source.h"
#include "codegen/nvrtc.h"
#include "search/space_gpu.h"
#include "support/cli_main.h"
#include "support/error.h"
#include "support/json.h"

namespace tuner::cli {

namespace {

struct BuildArgs {
  std::string op;
  std::vector<std::string> params;
  std::string target = "cuda -arch=sm_90";
  std::string db = "tuning_logs/tuning.db";
  std::string trace;
  bool source = false, opencl = false, ir = false, json = false;
  int random = 0;
  uint64_t seed = 1;
};

void print_build(const codegen::GpuBuild& b, bool json) {
  if (json) {
    Json ks = Json::array();
    for (auto& k : b.kernels)
      ks.push_back({{"entry", k.entry}, {"grid", k.grid}, {"block", k.block},
                    {"dynamic_shared_bytes", k.dynamic_shared_bytes}, {"registers", k.registers},
                    {"shared_bytes", k.shared_bytes}, {"spill_stores", k.spill_stores},
                    {"spill_loads", k.spill_loads}, {"stack_bytes", k.stack_bytes}});
    Json ps = Json::array();
    for (auto& p : b.params)
      ps.push_back({{"name", p.name}, {"dtype", p.dtype.str()}, {"shape", p.shape},
                    {"role", p.role == codegen::GpuParam::Input    ? "input"
                             : p.role == codegen::GpuParam::Output ? "output"
                                                                   : "workspace"}});
    Json j{{"arch", b.arch}, {"kernels", ks}, {"params", ps}, {"compile_s", b.compile_seconds},
           {"ptx_bytes", b.ptx.size()}, {"cubin_bytes", b.cubin.size()}};
    fmt::print("{}\n", j.dump());
    return;
  }
  fmt::print("NVRTC {} for {}: {:.3f} s, PTX {} bytes, cubin {} bytes\n", codegen::nvrtc_version(), b.arch,
             b.compile_seconds, b.ptx.size(), b.cubin.size());
  for (auto& k : b.kernels)
    fmt::print("  {}: grid ({},{},{}) block ({},{},{})  {} registers, {} B shared, spills {} B stores / {} B loads\n",
               k.entry, k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1], k.block[2], k.registers,
               k.shared_bytes, k.spill_stores, k.spill_loads);
  for (auto& p : b.params)
    fmt::print("  param {} {}[{}] {}\n", p.name, p.dtype.str(), fmt::join(p.shape, "x"),
               p.role == codegen::GpuParam::Input ? "input" : p.role == codegen::GpuParam::Output ? "output" : "workspace");
}

// N candidates of the GPU space: verifier rejections and NVRTC time per built candidate.
void build_random(const OpWorkload& w, const BuildArgs& a) {
  search::SpaceOptions space = search::space_options_for(w.target);
  int rejected = 0, invalid = 0;
  std::map<std::string, int> why;  // rejections by the limit exceeded
  std::vector<double> secs;
  for (int i = 0; i < a.random; ++i) {
    auto s = search::generate_gpu_schedule(w.dag, space, a.seed + uint64_t(i));
    try {
      secs.push_back(codegen::build_gpu_kernel(s.state(), w.target, "cand").compile_seconds);
    } catch (const codegen::GpuLimitError& e) {
      ++rejected;
      std::string m = e.what();
      for (const char* k : {"threads per block", "blockDim", "gridDim", "shared memory", "local arrays",
                            "virtual threads", "registers"})
        if (m.find(k) != std::string::npos) ++why[k];
    } catch (const schedule::ScheduleError&) {
      ++invalid;
    }
  }
  std::sort(secs.begin(), secs.end());
  std::string reasons;
  for (auto& [k, n] : why) reasons += fmt::format("{}{}: {}", reasons.empty() ? "" : ", ", k, n);
  double median = secs.empty() ? 0 : secs[secs.size() / 2];
  if (a.json) {
    fmt::print("{}\n", Json{{"op", w.def->name}, {"params", w.params.str()}, {"target", w.target.str()},
                            {"candidates", a.random}, {"rejected_by_verifier", rejected},
                            {"invalid", invalid}, {"built", secs.size()}, {"nvrtc_median_s", median},
                            {"rejections", why}}
                           .dump());
    return;
  }
  fmt::print("{} {} for {}: {} random GPU candidates, {} rejected by the verifier ({:.0f}%), {} invalid, "
             "{} built; NVRTC median {:.3f} s per candidate\n",
             w.def->name, w.params.str(), w.target.str(), a.random, rejected,
             100.0 * rejected / std::max(1, a.random), invalid, secs.size(), median);
  if (!reasons.empty()) fmt::print("  rejections by limit (a candidate may exceed several): {}\n", reasons);
}

void cmd_build(const BuildArgs& a) {
  OpWorkload w = prepare_op(a.op, a.params, a.target, true);
  USER_CHECK(w.target.is_cuda()) << "tuner op build is for cuda targets (got " << w.target.str()
                                 << "); use `tuner op show --asm` for llvm targets";
  if (a.random > 0) return build_random(w, a);
  ChosenSchedule c = a.trace.empty() ? choose_schedule(w.dag, w.target, a.db) : load_trace_schedule(w.dag, a.trace);
  auto f = codegen::lower_and_verify_gpu(c.sched.state(), w.target, w.def->name);
  if (!a.json) fmt::print("{} {}  [schedule: {}, target {}]\n", w.def->name, w.params.str(), c.source, w.target.str());
  if (a.ir) fmt::print("{}\n", f.str());
  if (a.opencl) fmt::print("{}\n", codegen::emit_gpu_source(f, codegen::GpuDialect::OpenCL));
  auto b = codegen::build_gpu_kernel(c.sched.state(), w.target, w.def->name);
  if (a.source) fmt::print("{}\n", b.source);
  print_build(b, a.json);
}

}  // namespace

void add_op_build_command(CLI::App* op) {
  static BuildArgs args;
  auto* cmd = op->add_subcommand("build", "compile an operator for a GPU (NVRTC): source, launch, registers");
  cmd->add_option("op", args.op, "operator name (see `tuner op list`)")->required();
  cmd->add_option("params", args.params, "parameters as key=value");
  cmd->add_option("--target", args.target, "a cuda target")->capture_default_str();
  cmd->add_option("--db", args.db, "tuning database (its best record is used when there is one)")
      ->capture_default_str();
  auto* trace =
      cmd->add_option("--trace", args.trace, "use this schedule trace (JSON file) instead");
  auto* source = cmd->add_flag("--source", args.source, "print the CUDA C");
  auto* opencl = cmd->add_flag("--opencl", args.opencl, "print the OpenCL C of the same kernels");
  auto* ir = cmd->add_flag("--ir", args.ir, "print the GPU loop IR");
  // --random builds many candidates and prints statistics: these would be ignored silently.
  cmd->add_option("--random", args.random, "sample this many candidates of the GPU space instead")
      ->transform(number_in(0, 1e6))
      ->excludes(trace)
      ->excludes(source)
      ->excludes(opencl)
      ->excludes(ir);
  cmd->add_option("--seed", args.seed, "first seed of --random")
      ->check(uint64_number())
      ->capture_default_str();
  cmd->add_flag("--json", args.json, "print one JSON object");
  cmd->callback([] { cmd_build(args); });
}

}  // namespace tuner::cli
