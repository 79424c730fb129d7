#include "compile/compile_model.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "codegen/build.h"
#include "graph/converters.h"
#include "compile/schedule_choice.h"
#include "runtime/cpu_features.h"
#include "runtime/memory_plan.h"
#include "schedule/lower.h"
#include "support/atomic_file.h"
#include "support/error.h"
#include "support/log.h"

namespace tuner::compile {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void write_file(const std::filesystem::path& p, const std::string& text) {
  write_file_atomically(p.string(), text);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

// Builds the plan's buffers and steps for the fused groups.
class PlanBuilder {
 public:
  PlanBuilder(const graph::Graph& g, runtime::Artifact& art) : g_(g), art_(art) {}

  void build(const graph::TaskSet& ts) {
    runtime::Plan& p = art_.plan;
    for (size_t i = 0; i < g_.inputs.size(); ++i)
      p.inputs.push_back(bind(g_.inputs[i], runtime::Storage::Input, int64_t(i)));
    for (const graph::Node& n : g_.nodes) add_index_check(n);
    // An in-place concat's inputs are views of its output: their kernels write their parts.
    for (int ni : ts.in_place_concats) {
      const graph::Node& n = g_.nodes[size_t(ni)];
      int whole = buffer(n.outputs[0]);
      int64_t offset = 0;
      for (int v : n.inputs) {
        int part = buffer(v);
        view_of_[part] = {whole, offset};
        offset += p.buffers[size_t(part)].bytes;
      }
    }
    // Outputs get buffers of their own; one produced by a group is written there directly,
    // one that is a model input or a constant is copied.
    std::vector<std::pair<int, int>> late_copies;
    for (size_t k = 0; k < g_.outputs.size(); ++k) {
      int v = g_.outputs[k];
      bool produced = g_.values[size_t(v)].producer >= 0;
      if (produced && !buffer_of_.count(v)) {
        p.outputs.push_back(bind(v, runtime::Storage::Output, int64_t(k)));
        continue;
      }
      int out = add_buffer(g_.values[size_t(v)], runtime::Storage::Output, int64_t(k));
      p.outputs.push_back(out);
      if (produced) late_copies.push_back({v, out});
      else p.steps.push_back({"@copy", {buffer(v), out}, "copy", -1});
    }
    for (size_t gi = 0; gi < ts.groups.size(); ++gi) {
      const graph::Group& grp = ts.groups[gi];
      runtime::Step s;
      s.kernel = kernel_name(ts.task_of_group[gi]);
      s.task = ts.task_of_group[gi];
      s.label = grp.ops(g_);
      for (int v : grp.inputs) s.args.push_back(buffer(v));
      for (int v : grp.outputs) s.args.push_back(buffer(v));
      p.steps.push_back(std::move(s));
    }
    for (auto [v, out] : late_copies) p.steps.push_back({"@copy", {buffer(v), out}, "copy", -1});
    plan_arena();
  }

  static std::string kernel_name(int task) { return "task" + std::to_string(task); }

 private:
  // Indices a model input feeds are checked when the model runs (constant ones were checked
  // at import): out of range they are errors in ONNX, and the kernels would clamp them.
  // An input reaching the indices through ops that keep its values (Reshape, a widening
  // Cast: input_ids as int32 cast to int64) is checked too: those indices were clamped.
  void add_index_check(const graph::Node& n) {
    if (n.dead || n.inputs.size() < 2) return;
    int v = n.inputs[1];
    while (v >= 0 && g_.values[size_t(v)].producer >= 0) {
      const graph::Node& p = g_.nodes[size_t(g_.values[size_t(v)].producer)];
      if (p.dead || p.inputs.empty() || !keeps_values(p)) return;
      v = p.inputs[0];
    }
    auto in = std::find(g_.inputs.begin(), g_.inputs.end(), v);
    if (in == g_.inputs.end()) return;
    te::DataType t = g_.values[size_t(v)].dtype;
    if (t != te::DataType::i32() && t != te::DataType::i64()) return;  // what the check reads
    runtime::IndexCheck c;
    c.limits = graph::index_limits(g_, n);
    if (c.limits.empty()) return;
    c.input = int(in - g_.inputs.begin());
    c.op = graph::describe(n);
    art_.plan.index_checks.push_back(std::move(c));
  }

  // Whether node p's output holds its first input's values in the same order (the checks'
  // limits are by element position: GatherND's per index component).
  bool keeps_values(const graph::Node& p) const {
    static const std::set<std::string> kMoves = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"};
    if (kMoves.count(p.op)) return true;
    if (p.op != "Cast") return false;
    te::DataType from = g_.values[size_t(p.inputs[0])].dtype, to = g_.values[size_t(p.outputs[0])].dtype;
    return (from == te::DataType::i32() || from == te::DataType::i64()) &&
           (to == te::DataType::i64() || to == from);
  }

  int add_buffer(const graph::Value& v, runtime::Storage s, int64_t offset) {
    runtime::BufferDesc d;
    d.name = v.name;
    d.shape = v.shape;
    d.dtype = v.dtype.str();
    d.bytes = v.num_elements() * v.dtype.bytes();
    d.storage = s;
    d.offset = offset;
    art_.plan.buffers.push_back(std::move(d));
    return int(art_.plan.buffers.size()) - 1;
  }

  int bind(int v, runtime::Storage s, int64_t offset) {
    int id = add_buffer(g_.values[size_t(v)], s, offset);
    buffer_of_[v] = id;
    return id;
  }

  // The buffer of value v, made on first use: weights for constants, arena otherwise.
  int buffer(int v) {
    auto it = buffer_of_.find(v);
    if (it != buffer_of_.end()) return it->second;
    const graph::Value& val = g_.values[size_t(v)];
    if (!val.is_constant()) return bind(v, runtime::Storage::Arena, 0);
    size_t offset = (art_.weights.size() + 63) / 64 * 64;
    art_.weights.resize(offset);
    art_.weights.append(static_cast<const char*>(val.data->raw()), val.data->bytes());
    return bind(v, runtime::Storage::Weight, int64_t(offset));
  }

  void plan_arena() {
    runtime::Plan& p = art_.plan;
    std::vector<runtime::Lifetime> lives;
    std::vector<int> ids;
    std::map<int, size_t> life_of;  // buffer -> its lifetime's index
    for (size_t b = 0; b < p.buffers.size(); ++b) {
      if (p.buffers[b].storage != runtime::Storage::Arena || view_of_.count(int(b))) continue;
      life_of[int(b)] = lives.size();
      lives.push_back({p.buffers[b].bytes, int(p.steps.size()), -1});
      ids.push_back(int(b));
      p.unplanned_bytes += p.buffers[b].bytes;
    }
    // A view's uses are its whole buffer's.
    for (size_t s = 0; s < p.steps.size(); ++s)
      for (int a : p.steps[s].args) {
        auto v = view_of_.find(a);
        auto it = life_of.find(v == view_of_.end() ? a : v->second.first);
        if (it == life_of.end()) continue;
        runtime::Lifetime& l = lives[it->second];
        l.first = std::min(l.first, int(s));
        l.last = std::max(l.last, int(s));
      }
    runtime::MemoryPlan mp = runtime::plan_memory(lives);
    for (size_t i = 0; i < ids.size(); ++i) p.buffers[size_t(ids[i])].offset = mp.offsets[i];
    for (auto [view, whole] : view_of_)
      p.buffers[size_t(view)].offset = p.buffers[size_t(whole.first)].offset + whole.second;
    p.arena_bytes = mp.arena_bytes;
  }

  const graph::Graph& g_;
  runtime::Artifact& art_;
  std::map<int, int> buffer_of_;
  std::map<int, std::pair<int, int64_t>> view_of_;  // buffer -> (whole buffer, byte offset)
};

// A plan larger than this machine's memory only fails when it runs ("out of memory
// allocating ..."): say so at compile time (the artifact may be meant for a bigger machine).
void warn_if_larger_than_memory(const runtime::Artifact& art) {
  double need = double(art.plan.arena_bytes) + double(art.weights.size());
  for (const auto& b : art.plan.buffers)
    if (b.storage == runtime::Storage::Input || b.storage == runtime::Storage::Output)
      need += double(b.bytes);
  double have = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE));
  if (have > 0 && need > have)
    log(LogLevel::Info,
        "warning: the model needs {:.1f} GiB of buffers at run time, more than this machine's "
        "{:.1f} GiB",
        need / double(1 << 30), have / double(1 << 30));
}

}  // namespace

graph::PassOptions pass_options_for(const codegen::Target& target) {
  graph::PassOptions po;
  if (target.is_llvm()) {
    po.vector_lanes = target.vector_lanes();
    po.vector_registers = target.vector_registers();
    po.byte_dot = target.byte_dot_at_full_width();
  }
  return po;
}

runtime::Artifact compile_model(const graph::Graph& g, const ModelCompileOptions& opts,
                                CompileReport* report) {
  USER_CHECK(opts.target.is_llvm())
      << "compiling whole models for " << opts.target.str() << " is not supported yet";
  auto t0 = std::chrono::steady_clock::now();
  graph::TaskSet ts = graph::extract_tasks(g, opts.fuse);
  auto db = open_db_if_present(opts.db_path);
  CompileReport rep;
  rep.db_found = db != nullptr;
  rep.groups = int(ts.groups.size());
  rep.tasks = int(ts.tasks.size());
  std::filesystem::path dump(opts.dump_dir);
  if (!opts.dump_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(dump, ec);
    USER_CHECK(!ec && std::filesystem::is_directory(dump))
        << "cannot create the dump folder " << opts.dump_dir << ": "
        << (ec ? ec.message() : "not a directory");
  }
  std::vector<schedule::LoweredFunc> funcs;
  for (size_t i = 0; i < ts.tasks.size(); ++i) {
    const graph::Task& task = ts.tasks[i];
    std::optional<schedule::Schedule> picked = opts.pick ? opts.pick(i) : std::nullopt;
    ChosenSchedule c = picked ? ChosenSchedule{std::move(*picked), "picked", true}
                              : choose_schedule(task.dag, opts.target, db.get(), opts.in_model_choice);
    rep.tasks_from_db += c.from_db;
    rep.tasks_stale += c.stale;
    rep.tasks_other_fallback += c.against_other_fallback;
    rep.task_sources.push_back(c.source);
    std::string name = PlanBuilder::kernel_name(int(i));
    funcs.push_back(schedule::lower(c.sched.state(), name));
    if (opts.verbose)
      log(LogLevel::Info, "task {:3d} {:<40} x{} {}", i, task.ops.substr(0, 40), task.weight, c.source);
    if (!opts.dump_dir.empty()) {
      write_file(dump / (name + ".dag.txt"), task.dag.str());
      write_file(dump / (name + ".trace.json"), c.sched.trace().to_json().dump(2) + "\n");
      write_file(dump / (name + ".lowered.txt"), funcs.back().str());
    }
  }
  runtime::Artifact art;
  art.plan.model = g.name;
  art.plan.target = opts.target.str();
  art.plan.cpu_features = opts.target.enabled_features(runtime::checkable_cpu_features());
  PlanBuilder(g, art).build(ts);
  warn_if_larger_than_memory(art);

  std::string dir = codegen::make_temp_dir("tuner-compile");
  std::string so = dir + "/model.so";
  codegen::BuildOptions bo;
  bo.keep_llvm_ir = !opts.dump_dir.empty();
  try {
    codegen::BuildResult br = codegen::build_shared_object(funcs, opts.target, so, bo);
    rep.codegen_seconds = br.codegen_seconds + br.link_seconds;
    if (!opts.dump_dir.empty()) write_file(dump / "model.ll", br.llvm_ir);
    art.shared_object = read_file(so);
  } catch (...) {
    unlink(so.c_str());
    rmdir(dir.c_str());
    throw;
  }
  unlink(so.c_str());
  rmdir(dir.c_str());
  rep.seconds = seconds_since(t0);
  rep.arena_bytes = art.plan.arena_bytes;
  rep.unplanned_bytes = art.plan.unplanned_bytes;
  rep.weight_bytes = int64_t(art.weights.size());
  if (report) *report = std::move(rep);
  return art;
}

}  // namespace tuner::compile
