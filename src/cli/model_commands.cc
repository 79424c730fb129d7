// `tuner tasks`, `tuner compile` and `tuner run`: whole ONNX models.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "cli/commands.h"
#include "cli/model_common.h"
#include "cli/tune_view.h"
#include "codegen/target.h"
#include "compile/compile_model.h"
#include "db/record.h"
#include "graph/onnx_import.h"
#include "graph/passes.h"
#include "graph/tensor_proto.h"
#include "measure/measure_option.h"
#include "runtime/executor.h"
#include "support/atomic_file.h"
#include "support/cli_main.h"
#include "support/error.h"
#include "support/json.h"
#include "support/log.h"
#include "support/rng.h"
#include "ops/shape.h"

namespace tuner::cli {

namespace {

void run_tasks(const ModelArgs& a, bool json) {
  codegen::Target target = codegen::Target::parse(a.target);
  graph::Graph g = load_model(a, false);
  graph::FuseOptions fo;
  fo.enabled = !a.no_fuse;
  graph::TaskSet ts = graph::extract_tasks(g, fo);
  double total = 0;
  for (const auto& t : ts.tasks) total += t.dag.flops() * t.weight;
  if (json) {
    Json out = Json::array();
    for (size_t i = 0; i < ts.tasks.size(); ++i) {
      const auto& t = ts.tasks[i];
      Json shapes = Json::array();
      for (const auto& o : t.dag.outputs()) shapes.push_back(o->shape);
      out.push_back({{"task", i},
                     {"ops", t.ops},
                     {"weight", t.weight},
                     {"flops", t.dag.flops()},
                     {"output_shapes", shapes},
                     {"hash", t.dag.hash_hex()},
                     {"first_node", t.first_node}});
    }
    fmt::print("{}\n", Json{{"model", g.name}, {"target", target.str()}, {"tasks", out},
                            {"groups", ts.groups.size()}, {"total_flops", total}}
                           .dump(2));
    return;
  }
  fmt::print("{}: {} nodes in {} kernels, {} distinct tasks, {:.3f} GFLOP per run ({})\n", g.name,
             g.num_nodes(), ts.groups.size(), ts.tasks.size(), total * 1e-9, target.str());
  fmt::print("{:>4}  {:<36} {:>6} {:>10}  {:<20} {}\n", "task", "operators", "weight", "MFLOP",
             "output", "hash");
  for (size_t i = 0; i < ts.tasks.size(); ++i) {
    const auto& t = ts.tasks[i];
    std::string ops = t.ops.size() > 36 ? t.ops.substr(0, 33) + "..." : t.ops;
    fmt::print("{:>4}  {:<36} {:>6} {:>10.2f}  {:<20} {}\n", i, ops, t.weight, t.dag.flops() * 1e-6,
               te::shape_str(t.dag.outputs()[0]->shape), t.dag.hash_hex());
  }
}

struct CompileArgs {
  ModelArgs m;
  std::string db = "tuning_logs/tuning.db";
  std::string out;
  std::string dump;
  bool print_passes = false;
};

void run_compile(const CompileArgs& a) {
  auto t0 = std::chrono::steady_clock::now();
  compile::ModelCompileOptions o;
  o.target = codegen::Target::parse(a.m.target);
  o.target.check_builds_kernels();  // before compiling every kernel
  o.db_path = a.db;
  o.dump_dir = a.dump;
  o.fuse.enabled = !a.m.no_fuse;
  o.verbose = log_level() >= LogLevel::Debug;  // `tuner -v compile`: each task's schedule
  std::string out = a.out.empty() ? std::filesystem::path(a.m.model).stem().string() + ".tuner"
                                  : a.out;
  protect_input_file(a.m.model, "model being read");
  if (!a.db.empty()) protect_input_file(a.db, "tuning database");
  check_output_path(out);  // before compiling
  graph::Graph g = load_model(a.m, a.print_passes);
  compile::CompileReport rep;
  runtime::Artifact art = compile::compile_model(g, o, &rep);
  art.save(out);
  double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  bool quiet = log_level() == LogLevel::Quiet;  // `tuner -q compile`: warnings and errors only
  if (!quiet)
    fmt::print("compiled {} for {}: {} kernels from {} tasks ({} tuned, {} fallback) in {:.1f} s\n",
               g.name, o.target.str(), rep.groups, rep.tasks, rep.tasks_from_db,
               rep.tasks - rep.tasks_from_db, secs);
  if (!quiet && !o.db_path.empty() && rep.tasks > 0 && !rep.db_found)
    fmt::print(stderr,
               "note: no tuning database at {}: every task uses its fallback schedule "
               "(`tuner tune` makes one)\n",
               o.db_path);
  if (rep.tasks_stale)
    fmt::print(stderr,
               "warning: {} tasks have records in {} that no longer replay (written by an older "
               "Tuner): they use the fallback schedule until tuned again\n",
               rep.tasks_stale, o.db_path);
  if (rep.tasks_other_fallback)
    fmt::print(stderr,
               "warning: {} tasks use schedules timed after tuning against another fallback than "
               "this Tuner's (an older Tuner tuned them; `tuner -v compile` lists them): they may be "
               "slower than it; tuning the model again with {} (any --trials) times them against it\n",
               rep.tasks_other_fallback, o.db_path);
  if (quiet) return;
  fmt::print("memory: weights {}, intermediates {} planned into {} (peak)\n",
             human_bytes(rep.weight_bytes), human_bytes(rep.unplanned_bytes),
             human_bytes(rep.arena_bytes));
  fmt::print("wrote {}\n", out);
}

struct RunArgs {
  std::string artifact;
  std::vector<std::string> inputs, compare;
  int repeat = 50;
  int warmup = 3;
  int threads = 0;
  double rtol = 1e-3, atol = 1e-4;
  bool json = false, profile = false;
  uint64_t seed = 0;
};

// Tensor files for the model's inputs or outputs, in the order they feed `slots`: by tensor
// name when the files name exactly the slots, in another order (they were fed by position,
// silently mismatched); else by position.
struct SlotTensor {
  ops::HostTensor tensor;
  std::string file, name;  // name: the tensor's, in the file

  /// Warns when the file names another tensor than the slot it feeds (`what` `slot`).
  void warn_if_named_otherwise(const char* what, const std::string& slot) const {
    if (!name.empty() && name != slot)
      fmt::print(stderr, "warning: {} holds tensor '{}', read as {} '{}' by position\n", file, name,
                 what, slot);
  }
};
std::vector<SlotTensor> load_in_slot_order(const std::vector<std::string>& files,
                                           const std::vector<std::string>& slots) {
  std::vector<ops::HostTensor> loaded(files.size());
  std::vector<std::string> names(files.size());
  for (size_t i = 0; i < files.size(); ++i)
    loaded[i] = graph::load_tensor_file(files[i], &names[i]);
  std::vector<std::string> a = names, b = slots;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  bool by_name = a == b && std::adjacent_find(b.begin(), b.end()) == b.end();
  std::vector<SlotTensor> out(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    size_t k =
        by_name ? size_t(std::find(names.begin(), names.end(), slots[i]) - names.begin()) : i;
    out[i] = {std::move(loaded[k]), files[k], names[k]};
  }
  return out;
}

int run_run(const RunArgs& a) {
  runtime::Artifact art = runtime::Artifact::load(a.artifact);
  codegen::Target::parse(art.plan.target).check_runs_here(a.artifact);  // not SIGILL mid-run
  runtime::Executor ex(std::move(art), a.threads);
  if (!a.inputs.empty() && a.inputs.size() != ex.num_inputs()) {
    std::vector<std::string> names;
    for (size_t i = 0; i < ex.num_inputs(); ++i) names.push_back("'" + ex.input_desc(i).name + "'");
    USER_ERROR() << "the model has " << ex.num_inputs() << " input" << (ex.num_inputs() == 1 ? "" : "s")
                 << (names.empty() ? "" : fmt::format(" ({})", fmt::join(names, ", "))) << ", "
                 << a.inputs.size() << " given";
  }
  USER_CHECK(a.compare.empty() || a.compare.size() == ex.num_outputs())
      << "the model has " << ex.num_outputs() << " outputs, " << a.compare.size()
      << " references given";
  // References are the outputs of given inputs: against random ones every element differs.
  USER_CHECK(a.compare.empty() || !a.inputs.empty() || ex.num_inputs() == 0)
      << "--compare needs the inputs its references were computed from (--input)";
  auto slot_names = [](size_t n, auto desc) {
    std::vector<std::string> v;
    for (size_t i = 0; i < n; ++i) v.push_back(desc(i).name);
    return v;
  };
  std::vector<SlotTensor> given = load_in_slot_order(
      a.inputs, slot_names(ex.num_inputs(), [&](size_t i) { return ex.input_desc(i); }));
  Rng rng(a.seed);
  for (size_t i = 0; i < ex.num_inputs(); ++i) {
    const auto& d = ex.input_desc(i);
    ops::HostTensor t;
    if (!a.inputs.empty()) {
      t = std::move(given[i].tensor);
      USER_CHECK(t.shape == d.shape && t.dtype.str() == d.dtype)
          << given[i].file << ": " << t.dtype.str() << "[" << te::shape_str(t.shape)
          << "] does not match input '" << d.name << "' " << d.dtype << "["
          << te::shape_str(d.shape) << "]";
      given[i].warn_if_named_otherwise("input", d.name);
    } else {
      t = random_input(ex, i, rng);
    }
    ex.set_input(i, t.raw(), t.bytes());
  }
  // The references are read and checked before the runs (a wrong one failed after them all).
  std::vector<SlotTensor> refs = load_in_slot_order(
      a.compare, slot_names(ex.num_outputs(), [&](size_t i) { return ex.output_desc(i); }));
  for (size_t k = 0; k < a.compare.size(); ++k) {
    const ops::HostTensor& ref = refs[k].tensor;
    const auto& d = ex.output_desc(k);
    USER_CHECK(ref.shape == d.shape && ref.dtype.str() == d.dtype)
        << refs[k].file << ": " << ref.dtype.str() << "[" << te::shape_str(ref.shape)
        << "] does not match output '" << d.name << "' " << d.dtype << "[" << te::shape_str(d.shape)
        << "]";
    refs[k].warn_if_named_otherwise("output", d.name);
  }
  // Warm up for at least `warmup` runs and 50 ms: a worker thread woken for the first runs
  // can share the main thread's core for some milliseconds before the OS moves it, which
  // halved the speed of a 0.2 ms model's first runs.
  auto warm_start = std::chrono::steady_clock::now();
  for (int i = 0; a.warmup > 0 && (i < a.warmup || std::chrono::steady_clock::now() - warm_start <
                                                       std::chrono::milliseconds(50));
       ++i)
    ex.run();
  std::vector<double> times;
  // Per-kernel times of every run; the profile reports each kernel's median (noise-robust).
  std::vector<std::vector<double>> step_times(ex.plan().steps.size());
  ex.set_profiling(a.profile);
  for (int i = 0; i < std::max(1, a.repeat); ++i) {
    auto t0 = std::chrono::steady_clock::now();
    ex.run();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (a.profile)
      for (size_t k = 0; k < step_times.size(); ++k) step_times[k].push_back(ex.step_seconds()[k]);
  }
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  double median = sorted[sorted.size() / 2];
  double p90 = sorted[std::min(sorted.size() - 1, size_t(double(sorted.size()) * 0.9))];
  std::vector<double> step_median(step_times.size(), 0.0);
  if (a.profile)
    for (size_t k = 0; k < step_times.size(); ++k)
      step_median[k] = db::median_of(std::move(step_times[k]));

  bool ok = true, half = false;
  double max_abs = 0, max_rel = 0;
  std::vector<std::string> mismatches;
  for (size_t k = 0; k < a.compare.size(); ++k) {
    ops::HostTensor ref = std::move(refs[k].tensor);
    const auto& d = ex.output_desc(k);
    half |= ref.dtype == te::DataType::f16();
    ops::HostTensor got(d.shape, ref.dtype);
    std::memcpy(got.raw(), ex.output(k), got.bytes());
    // Equal infinities and NaN against NaN match (|inf - inf| is no error).
    ops::CompareResult c = ops::compare(got, ref, a.rtol, a.atol);
    max_abs = std::max(max_abs, c.max_abs_error);
    if (!c.ok) {
      ok = false;
      mismatches.push_back(d.name + " differs from the reference beyond tolerance: " + c.message);
    }
    for (int64_t i = 0; i < ref.num_elements(); ++i) {
      double e = ref.get(i), v = got.get(i);
      if (std::isfinite(e) && std::isfinite(v) && std::fabs(e) > a.atol)
        max_rel = std::max(max_rel, std::fabs(v - e) / std::fabs(e));
    }
  }
  // An infinity or NaN where the reference has none is an infinite error, relative too.
  if (std::isinf(max_abs)) max_rel = max_abs;
  if (a.json) {
    Json j{{"ok", ok},
           {"compared", !a.compare.empty()},
           {"max_abs_err", max_abs},
           {"max_rel_err", max_rel},
           {"latency_ms", median * 1e3},
           {"p90_ms", p90 * 1e3},
           {"repeat", times.size()},
           {"threads", ex.num_threads()}};
    if (a.profile) {
      Json steps = Json::array();
      for (size_t k = 0; k < step_median.size(); ++k)
        steps.push_back({{"step", k}, {"label", ex.plan().steps[k].label}, {"ms", step_median[k] * 1e3}});
      j["profile"] = steps;
    }
    fmt::print("{}\n", j.dump());
  } else {
    if (a.profile) {
      double total = 0;
      for (double s : step_median) total += s;
      std::vector<size_t> order(step_median.size());
      for (size_t k = 0; k < order.size(); ++k) order[k] = k;
      std::sort(order.begin(), order.end(),
                [&](size_t x, size_t y) { return step_median[x] > step_median[y]; });
      fmt::print("{:>4}  {:<44} {:>10} {:>7}\n", "step", "kernel", "median ms", "share");
      for (size_t k : order) {
        const auto& s = ex.plan().steps[k];
        std::string label = s.label.size() > 44 ? s.label.substr(0, 41) + "..." : s.label;
        fmt::print("{:>4}  {:<44} {:>10.3f} {:>6.1f}%\n", k, label, step_median[k] * 1e3,
                   100.0 * step_median[k] / total);
      }
    }
    fmt::print("{}: latency median {} ms, p90 {} ms ({} runs, {} threads)\n", ex.plan().model,
               format_ms(median), format_ms(p90), times.size(), ex.num_threads());
    if (!a.compare.empty())
      fmt::print("{}: max abs error {:.3g}, max rel error {:.3g} (rtol {:g}, atol {:g}{})\n",
                 ok ? "outputs match" : "OUTPUTS DIFFER", max_abs, max_rel, a.rtol, a.atol,
                 half ? "; float16 outputs at least 0.01 each" : "");
  }
  if (!ok) {
    fmt::print(stderr, "error: output {}\n", mismatches.empty() ? "?" : mismatches[0]);
    return 3;
  }
  return 0;
}

}  // namespace

void add_model_commands(CLI::App& app) {
  {
    auto a = std::make_shared<ModelArgs>();
    auto json = std::make_shared<bool>(false);
    CLI::App* cmd = app.add_subcommand("tasks", "list the tuning tasks of an ONNX model");
    add_model_options(cmd, *a);
    cmd->add_flag("--json", *json, "machine-readable output");
    cmd->callback([a, json] { run_tasks(*a, *json); });
  }
  {
    auto a = std::make_shared<CompileArgs>();
    CLI::App* cmd = app.add_subcommand(
        "compile", "compile an ONNX model with the best schedules (else fallback) into an artifact");
    add_model_options(cmd, a->m);
    cmd->add_option("--db", a->db, "tuning database")->capture_default_str();
    cmd->add_option("-o,--output", a->out, "artifact to write (default: MODEL.tuner)")
        ->check(nonempty_path());
    cmd->add_option("--dump", a->dump, "write every task's DAG, trace, lowered IR and LLVM IR here")
        ->check(nonempty_path());
    cmd->add_flag("--print-passes", a->print_passes,
                  "print the graph after import and after each pass that changed it");
    cmd->callback([a] { run_compile(*a); });
  }
  {
    auto a = std::make_shared<RunArgs>();
    CLI::App* cmd = app.add_subcommand("run", "run a compiled model, compare and time it");
    cmd->add_option("artifact", a->artifact, "a file written by `tuner compile`")
        ->required()
        ->check(nonempty_path());
    cmd->add_option("--input", a->inputs, "input TensorProto .pb files, in order (default: random)")
        ->check(nonempty_path());
    cmd->add_option("--compare", a->compare, "reference output .pb files, in order")
        ->check(nonempty_path());
    cmd->add_option("--repeat", a->repeat, "timed runs")
        ->capture_default_str()
        ->transform(number_in(1, 1e9));
    cmd->add_option("--warmup", a->warmup, "untimed runs first (at least this many, and 50 ms)")
        ->capture_default_str()
        ->transform(number_in(0, 1e9));
    measure::add_threads_option(cmd, &a->threads, "threads (default: TUNER_NUM_THREADS or all cores)");
    cmd->add_option("--rtol", a->rtol, "relative tolerance")
        ->capture_default_str()
        ->transform(number_in(0, 1e9));
    cmd->add_option("--atol", a->atol, "absolute tolerance")
        ->capture_default_str()
        ->transform(number_in(0, 1e9));
    cmd->add_option("--seed", a->seed, "seed of random inputs")
        ->check(uint64_number())
        ->capture_default_str();
    cmd->add_flag("--json", a->json, "one JSON object");
    cmd->add_flag("--profile", a->profile, "time every kernel");
    cmd->callback([a] {
      int rc = run_run(*a);
      if (rc != 0) throw CLI::RuntimeError(rc);
    });
  }
}

}  // namespace tuner::cli
