// `tuner op list|show|run`: single operators, compiled with their fallback schedule (or the
// best database record once tuning exists), checked against the naive reference and timed.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "cli/commands.h"
#include "cli/op_common.h"
#include "cli/tune_view.h"
#include "codegen/compile.h"
#include "codegen/target.h"
#include "graph/converters.h"
#include "graph/onnx_import.h"
#include "measure/builder.h"
#include "measure/local_runner.h"
#include "measure/measure_option.h"
#include "measure/target_launcher.h"
#include "ops/registry.h"
#include "runtime/module.h"
#include "runtime/thread_pool.h"
#include "schedule/fallback.h"
#include "support/cli_main.h"
#include "support/error.h"
#include "support/json.h"
#include "te/printer.h"

namespace tuner::cli {

namespace {

struct OpArgs {
  std::string op;
  std::vector<std::string> params;
  std::string target = "llvm";
  std::string db = "tuning_logs/tuning.db";
  std::string trace;
  int threads = 0;
  int repeat = 0;
  double min_seconds = 0.2;
  bool json = false;
  bool print_passes = false;
  bool print_llvm = false;
  bool print_asm = false;
};

void add_common(CLI::App* cmd, OpArgs& a) {
  cmd->add_option("op", a.op, "operator name (see `tuner op list`)")->required();
  cmd->add_option("params", a.params, "parameters as key=value (e.g. m=1024 n=1024 k=1024)");
  cmd->add_option("--target", a.target, "compilation target")->capture_default_str();
  cmd->add_option("--db", a.db, "tuning database (its best record is used when there is one)")
      ->capture_default_str();
  cmd->add_option("--trace", a.trace, "use this schedule trace (JSON file) instead");
}

struct Prepared {
  const ops::OpDef* def;
  ops::Params params;
  te::ComputeDAG dag;
  codegen::Target target;
  schedule::Schedule sched;
  std::string source;  // where the schedule came from
};

Prepared prepare(const OpArgs& a) {
  OpWorkload w = prepare_op(a.op, a.params, a.target);
  ChosenSchedule c = a.trace.empty() ? choose_schedule(w.dag, w.target, a.db)
                                     : load_trace_schedule(w.dag, a.trace);
  return {w.def, std::move(w.params), std::move(w.dag), std::move(w.target), std::move(c.sched), c.source};
}

// Operator names wrapped to the terminal, indented.
void print_wrapped(const std::vector<std::string>& ops) {
  std::string line;
  for (const auto& o : ops) {
    if (!line.empty() && line.size() + o.size() + 1 > 96) {
      fmt::print("  {}\n", line);
      line.clear();
    }
    line += (line.empty() ? "" : " ") + o;
  }
  if (!line.empty()) fmt::print("  {}\n", line);
}

// The ONNX operators `tuner compile` converts: the default domain's, then ONNX Runtime's
// (com.microsoft, listed with their domain in --json).
void list_onnx_ops(bool json) {
  std::vector<std::string> ops = graph::supported_ops(), ort = graph::supported_ops("com.microsoft");
  if (json) {
    for (const auto& o : ort) ops.push_back("com.microsoft." + o);
    fmt::print("{}\n", Json(ops).dump(2));
    return;
  }
  fmt::print("{} ONNX operators (default domain, opsets {} to {}):\n", ops.size(), graph::kMinOpset,
             graph::kMaxOpset);
  print_wrapped(ops);
  fmt::print("{} ONNX Runtime operators (domain com.microsoft, of quantized models):\n", ort.size());
  print_wrapped(ort);
}

void cmd_list(bool json, bool onnx) {
  if (onnx) return list_onnx_ops(json);
  if (json) {
    Json out = Json::array();
    for (auto& d : ops::op_registry()) {
      Json j{{"name", d.name}, {"help", d.help}, {"params", Json::array()}};
      for (auto& p : d.params)
        j["params"].push_back({{"name", p.name}, {"default", p.default_value}, {"help", p.help}});
      out.push_back(j);
    }
    fmt::print("{}\n", out.dump(2));
    return;
  }
  size_t w = 0;
  for (auto& d : ops::op_registry()) w = std::max(w, d.name.size());
  for (auto& d : ops::op_registry()) {
    std::string ps;
    for (auto& p : d.params)
      ps += " " + p.name + (p.default_value.empty() ? "" : "=" + p.default_value);
    fmt::print("{:<{}}  {}\n{:<{}}  params:{}\n", d.name, w, d.help, "", w, ps);
  }
}

void cmd_show(const OpArgs& a) {
  Prepared p = prepare(a);
  fmt::print("workload {} ({} {})\n\n", p.dag.hash_hex(), p.def->name, p.params.str());
  fmt::print("{}\n", p.dag.str());
  fmt::print("schedule ({}):\n{}\n{}\n", p.source, p.sched.trace().pretty(), p.sched.state().str());
  schedule::LowerOptions lo;
  lo.print_passes = a.print_passes;
  fmt::print("{}", schedule::lower(p.sched.state(), p.def->name, lo).str());
  if (a.print_llvm || a.print_asm) {
    codegen::CompileOptions co;
    co.build.keep_llvm_ir = a.print_llvm;
    co.build.keep_asm = a.print_asm;
    // Built, not loaded: the text of cross targets (aarch64) is printed the same way.
    auto b = codegen::build_kernel(p.sched.state(), p.target, p.def->name, co);
    if (a.print_llvm) fmt::print("\n{}", b.llvm_ir);
    if (a.print_asm) fmt::print("\n{}", b.assembly);
  }
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Kernels of another architecture (aarch64 on x86): cross-compiled here and run by a
// LocalRunner whose child runs them under an emulator (qemu-aarch64), checked there against
// the op's naive reference computed on this host. The times are the emulator's.
void cmd_run_emulated(const Prepared& p, const OpArgs& a) {
  measure::ChildLauncher launcher = measure::launcher_for(p.target);  // says what is missing
  measure::BuilderOptions bo;
  bo.threads = 1;
  bo.timeout_s = 600;
  measure::Builder builder(bo);
  double t0 = now_seconds();
  auto built = builder.build(p.dag, {p.sched.trace()}, p.target);
  double compile_s = now_seconds() - t0;
  USER_CHECK(built.size() == 1 && built[0].ok())
      << "cannot build " << p.def->name << " for " << p.target.str() << ": " << built[0].error;

  measure::MeasureTask task{p.dag, p.target, 0, {}, {}};
  task.inputs = p.def->make_inputs(p.params, p.dag, 42);
  task.expected = p.def->reference(p.params, task.inputs);
  measure::LocalRunnerOptions ro;
  ro.launcher = launcher;
  ro.threads = a.threads > 0 ? a.threads : default_num_threads();
  ro.repeats = a.repeat > 0 ? a.repeat : 3;
  ro.min_repeat_ms = 1;  // timings under emulation only need to exist
  ro.timeout_s = 600;
  ro.give_up_factor = 0;
  measure::LocalRunner runner(ro);
  measure::MeasureResult r = runner.run(task, built).at(0);
  USER_CHECK(r.status != db::MeasureStatus::WrongAnswer)
      << "result of " << p.def->name << " does not match the reference (under "
      << launcher.device << "): " << r.error;
  USER_CHECK(r.ok()) << "running " << p.def->name << " under " << launcher.device
                     << " failed: " << r.str();
  double median = r.median();
  if (a.json) {
    Json j{{"op", p.def->name},        {"params", p.params.str()}, {"workload", p.dag.hash_hex()},
           {"target", p.target.str()}, {"schedule", p.source},     {"threads", ro.threads},
           {"latency_ms", median * 1e3}, {"ok", true},              {"repeats", r.times.size()},
           {"compile_s", compile_s},     {"device", launcher.device}, {"emulated", true}};
    fmt::print("{}\n", j.dump());
    return;
  }
  fmt::print("{} {}  [{} threads, schedule: {}, target {}]\n", p.def->name, p.params.str(),
             ro.threads, p.source, p.target.str());
  fmt::print("  emulated under {}: latency {} ms (median of {}) is not a performance figure"
             "  compile {:.2f} s\n",
             launcher.device, format_ms(median), r.times.size(), compile_s);
  fmt::print("  check against reference: ok\n");
}

void cmd_run(const OpArgs& a) {
  Prepared p = prepare(a);
  if (!p.target.runs_on_host()) return cmd_run_emulated(p, a);
  double t0 = now_seconds();
  auto kernel = codegen::compile_kernel(p.sched.state(), p.target, "op_kernel");
  double compile_s = now_seconds() - t0;

  auto inputs = p.def->make_inputs(p.params, p.dag, 42);
  std::vector<ops::HostTensor> outputs;
  for (auto& t : p.dag.outputs()) outputs.emplace_back(t->shape, t->dtype);
  std::vector<void*> args;
  for (auto& t : inputs) args.push_back(t.raw());
  for (auto& t : outputs) args.push_back(t.raw());

  runtime::ThreadPool pool(a.threads > 0 ? a.threads : default_num_threads());
  TunerEnv env = pool.env();
  auto call = [&] {
    int32_t rc = kernel(args.data(), env);
    USER_CHECK(rc == TUNER_KERNEL_OK) << "the kernel " << runtime::kernel_failure(rc);
  };
  call();
  auto expected = p.def->reference(p.params, inputs);
  USER_CHECK(expected.size() == outputs.size()) << "reference gives the wrong number of outputs";
  bool ok = true;
  double max_err = 0;
  std::string mismatch;
  for (size_t i = 0; i < outputs.size(); ++i) {
    auto c = ops::compare(outputs[i], expected[i], 1e-3, 2e-3);
    ok &= c.ok;
    max_err = std::max(max_err, c.max_abs_error);
    if (!c.ok && mismatch.empty()) mismatch = c.message;
  }

  // Timing: warm-up, then repeats until the minimum duration; the median is the cost.
  std::vector<double> times;
  double start = now_seconds();
  int repeat = a.repeat > 0 ? a.repeat : 1 << 30;
  for (int r = 0; r < repeat; ++r) {
    double s = now_seconds();
    call();
    times.push_back(now_seconds() - s);
    if (a.repeat <= 0 && now_seconds() - start >= a.min_seconds && times.size() >= 3) break;
  }
  std::sort(times.begin(), times.end());
  double median = times[times.size() / 2];
  double gflops = p.dag.flops() / median / 1e9;

  if (a.json) {
    Json j{{"op", p.def->name},       {"params", p.params.str()}, {"workload", p.dag.hash_hex()},
           {"target", p.target.str()}, {"schedule", p.source},  {"threads", pool.num_threads()},
           {"latency_ms", median * 1e3}, {"gflops", gflops},      {"max_abs_err", max_err},
           {"ok", ok},                 {"repeats", times.size()}, {"compile_s", compile_s}};
    fmt::print("{}\n", j.dump());
  } else {
    fmt::print("{} {}  [{} threads, schedule: {}, target {}]\n", p.def->name, p.params.str(),
               pool.num_threads(), p.source, p.target.str());
    fmt::print("  latency {} ms (median of {})  {:.2f} GFLOP/s  compile {:.2f} s\n", format_ms(median),
               times.size(), gflops, compile_s);
    fmt::print("  check against reference: {} (max abs error {:.3g})\n", ok ? "ok" : "MISMATCH", max_err);
  }
  USER_CHECK(ok) << "result of " << p.def->name << " does not match the reference: " << mismatch;
}

}  // namespace

void add_op_commands(CLI::App& app) {
  auto* op = app.add_subcommand("op", "single operators: list, show, run, tune, build");
  op->require_subcommand(1);

  static bool list_json = false, list_onnx = false;
  auto* list = op->add_subcommand("list", "list the operators and their parameters");
  list->add_flag("--json", list_json, "machine-readable output");
  list->add_flag("--onnx", list_onnx, "list the ONNX operators that models may use instead");
  list->callback([] { cmd_list(list_json, list_onnx); });

  static OpArgs show_args;
  auto* show = op->add_subcommand("show", "print an operator's DAG, schedule and loop IR");
  add_common(show, show_args);
  show->add_flag("--print-passes", show_args.print_passes, "print the IR after each lowering pass");
  show->add_flag("--llvm", show_args.print_llvm, "print the optimized LLVM IR");
  show->add_flag("--asm", show_args.print_asm, "print the generated assembly");
  show->callback([] { cmd_show(show_args); });

  static OpArgs run_args;
  auto* run = op->add_subcommand("run", "compile, check against the reference and time an operator");
  add_common(run, run_args);
  measure::add_threads_option(run, &run_args.threads,
                              "threads (default: all cores or TUNER_NUM_THREADS)");
  run->add_option("--repeat", run_args.repeat,
                  "timed repetitions (default: as many as fit in 0.2 s)")
      ->transform(number_in(1, 1e9));
  run->add_flag("--json", run_args.json, "print one JSON object");
  run->callback([] { cmd_run(run_args); });

  add_op_tune_command(op);
  add_op_build_command(op);
}

}  // namespace tuner::cli
