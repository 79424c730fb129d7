#include "schedule/lower_gpu.h"

#include <fmt/core.h>

#include <map>

#include "schedule/loop_nest.h"
#include "schedule/passes.h"
#include "support/error.h"
#include "te/functor.h"
#include "te/bounds.h"
#include "te/printer.h"
#include "te/simplify.h"

namespace tuner::schedule {

using namespace te;

namespace {

int axis_of(ForKind k) { return is_block_index(k) ? int(k) - int(ForKind::BlockIdxX) : int(k) - int(ForKind::ThreadIdxX); }

// Launch extents, local memory and vthread nesting of one kernel's loop IR.
struct KernelShape {
  std::array<int64_t, 3> grid{1, 1, 1}, block{1, 1, 1};
  int64_t local_bytes = 0, max_vthread = 1;
};

KernelShape measure(const Stmt& s) {
  class V : public IRVisitor {
   public:
    KernelShape k;
    int64_t vthread = 1;
    using IRVisitor::visit;

   protected:
    void visit_For(const ForNode* op, const Stmt& s) override {
      const int64_t* ext = as_const_int(op->extent);
      if (is_thread_index(op->for_kind)) {
        INTERNAL_CHECK(ext) << "a loop bound to " << for_kind_name(op->for_kind) << " has no constant extent";
        auto& dims = is_block_index(op->for_kind) ? k.grid : k.block;
        int64_t& d = dims[size_t(axis_of(op->for_kind))];
        d = std::max(d, *ext);
      }
      int64_t saved = vthread;
      if (op->for_kind == ForKind::VThread && ext) vthread *= *ext;
      k.max_vthread = std::max(k.max_vthread, vthread);
      IRVisitor::visit_For(op, s);
      vthread = saved;
    }
    void visit_Allocate(const AllocateNode* op, const Stmt& s) override {
      if (op->buffer->scope == MemScope::Local)
        k.local_bytes += op->buffer->num_elements() * op->buffer->dtype.bytes();
      IRVisitor::visit_Allocate(op, s);
    }
  } v;
  v.visit(s);
  return v.k;
}

// Replaces bound loops by their index variables (guarded when shorter than the launch
// extent), guards global/shared stores executed outside some used index (only index 0
// writes), turns vthreads into unrolled loops and hoists shared allocations.
class Binder : public IRMutator {
 public:
  Binder(GpuKernelIR& k) : k_(k) {
    for (int a = 0; a < 3; ++a) {
      if (k.grid[size_t(a)] > 1) used_.push_back(ForKind(int(ForKind::BlockIdxX) + a));
      if (k.block[size_t(a)] > 1) used_.push_back(ForKind(int(ForKind::ThreadIdxX) + a));
    }
  }

 protected:
  Stmt visit_For(const ForNode* op, const Stmt& s) override {
    ForKind kind = op->for_kind;
    if (!is_thread_index(kind)) {
      Stmt body = mutate(op->body);
      ForKind k = kind == ForKind::VThread || kind == ForKind::Unrolled ? ForKind::Unrolled : ForKind::Serial;
      if (body.same_as(op->body) && k == kind) return s;
      return make_for(op->var, op->min, op->extent, k, body);
    }
    Var iv = index_var(kind);
    int64_t ext = *as_const_int(op->extent);
    int64_t launch = (is_block_index(kind) ? k_.grid : k_.block)[size_t(axis_of(kind))];
    active_.push_back(kind);
    Expr value = is_const(op->min, 0) ? Expr(iv) : op->min + iv;
    Stmt body = mutate(substitute(op->body, VarMap{{op->var.get(), value}}));
    active_.pop_back();
    return ext < launch ? if_then_else_stmt(iv < make_int(ext), body) : body;
  }
  Stmt visit_BufferStore(const BufferStoreNode* op, const Stmt& s) override {
    MemScope scope = op->buffer->scope;
    if (scope == MemScope::Local) return s;
    Expr cond;
    for (ForKind k : used_) {
      if (scope == MemScope::Shared && is_block_index(k)) continue;
      if (std::find(active_.begin(), active_.end(), k) != active_.end()) continue;
      Expr c = eq(index_var(k), make_int(0));
      cond = cond.defined() ? logical_and(cond, c) : c;
    }
    return cond.defined() ? if_then_else_stmt(cond, s) : s;
  }
  Stmt visit_Allocate(const AllocateNode* op, const Stmt& s) override {
    if (op->buffer->scope != MemScope::Shared) return IRMutator::visit_Allocate(op, s);
    k_.shared.push_back(op->buffer);
    k_.shared_bytes += op->buffer->num_elements() * op->buffer->dtype.bytes();
    return mutate(op->body);
  }

 private:
  Var index_var(ForKind kind) {
    for (auto& [k, v] : k_.index_vars)
      if (k == kind) return v;
    k_.index_vars.push_back({kind, Var(for_kind_name(kind))});
    return k_.index_vars.back().second;
  }

  GpuKernelIR& k_;
  std::vector<ForKind> used_, active_;
};

// Stage-level rules a GPU kernel needs to be correct.
void check_stages(const State& st) {
  for (auto& s : st.stages()) {
    if (s.loc == Location::Inline) continue;
    for (int id : s.leaves) {
      Annotation a = s.iters[id].ann;
      if (!is_binding(a) || a == Annotation::VThread) continue;
      bool block = a <= Annotation::BlockZ;
      if (s.loc == Location::At && block)
        throw ScheduleError("bind: " + s.name() + " is computed at a loop of " + s.attach_stage +
                            ": only root stages may bind " + annotation_name(a));
      if (s.loc == Location::At && s.scope == MemScope::Local)
        throw ScheduleError("bind: the local stage " + s.name() + " binds " + annotation_name(a) +
                            ": its values would be private to one thread (use scope shared)");
    }
  }
}

}  // namespace

std::string GpuLoweredFunc::str() const {
  std::string out;
  for (auto& k : kernels) {
    te::IRPrinter p;
    out += fmt::format("kernel {} grid=({},{},{}) block=({},{},{}) shared={}B local={}B\n", k.name,
                       k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1], k.block[2],
                       k.shared_bytes, k.local_bytes);
    for (auto& b : k.shared)
      out += "  shared " + p.name_of(b.get()) + "[" + b->dtype.str() + " x " +
             std::to_string(b->num_elements()) + "]\n";
    out += k.body ? p.print(k.body, 2) : "";
  }
  return out;
}

GpuLoweredFunc lower_gpu(const State& state, const std::string& name, const LowerOptions& opts) {
  check_stages(state);
  LoopNest nest = build_loop_nests(state);
  GpuLoweredFunc f;
  f.name = name;
  f.params = nest.args;
  f.num_inputs = int(state.dag().inputs().size());
  f.num_outputs = int(state.dag().outputs().size());
  // Root intermediates: global workspaces shared by the kernels.
  Stmt body = nest.body;
  while (auto* a = body.as<AllocateNode>()) {
    f.params.push_back(a->buffer);
    body = a->body;
  }
  std::vector<Stmt> parts;
  if (auto* sq = body.as<SeqStmtNode>()) parts = sq->seq;
  else if (body) parts = {body};
  for (auto& part : parts) {
    Stmt s = te::simplify(flatten_storage(part));
    if (!s) continue;
    verify_lowered(s, f.params);
    GpuKernelIR k;
    k.name = name + "_k" + std::to_string(f.kernels.size());
    KernelShape shape = measure(s);
    k.grid = shape.grid;
    k.block = shape.block;
    k.local_bytes = shape.local_bytes;
    k.max_vthread = shape.max_vthread;
    s = insert_barriers(s, k.block);
    s = Binder(k).mutate(s);
    // The index variables' ranges decide the guards a launch dimension makes redundant.
    RangeMap ranges;
    for (auto& [kind, v] : k.index_vars) {
      int64_t ext = (is_block_index(kind) ? k.grid : k.block)[size_t(axis_of(kind))];
      ranges[v.get()] = {0, ext - 1};
    }
    k.body = te::simplify(s, ranges);
    if (opts.print_passes) fmt::print(stderr, "--- gpu kernel {} ---\n{}", k.name, te::to_string(k.body));
    f.kernels.push_back(std::move(k));
  }
  return f;
}

}  // namespace tuner::schedule
