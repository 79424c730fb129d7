#include "schedule/state.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <sstream>
#include <unordered_map>

#include "support/error.h"
#include "te/functor.h"

namespace tuner::schedule {

using te::Expr;
using te::IterVar;
using te::Tensor;
using te::Var;

const char* annotation_name(Annotation a) {
  switch (a) {
    case Annotation::None: return "none";
    case Annotation::Parallel: return "parallel";
    case Annotation::Vectorize: return "vectorize";
    case Annotation::Unroll: return "unroll";
    case Annotation::BlockX: return "blockIdx.x";
    case Annotation::BlockY: return "blockIdx.y";
    case Annotation::BlockZ: return "blockIdx.z";
    case Annotation::ThreadX: return "threadIdx.x";
    case Annotation::ThreadY: return "threadIdx.y";
    case Annotation::ThreadZ: return "threadIdx.z";
    case Annotation::VThread: return "vthread";
  }
  return "?";
}

Annotation binding_of(const std::string& tag) {
  for (int a = int(Annotation::BlockX); a <= int(Annotation::VThread); ++a)
    if (tag == annotation_name(Annotation(a))) return Annotation(a);
  throw ScheduleError("bind: unknown thread tag '" + tag + "'");
}

int Stage::leaf_pos(int iter) const {
  auto it = std::find(leaves.begin(), leaves.end(), iter);
  return it == leaves.end() ? -1 : int(it - leaves.begin());
}

Stage State::make_stage(Tensor op, int output_index) const {
  Stage s;
  s.op = op;
  s.output_index = output_index;
  for (auto& a : op->axes) s.iters.push_back({a.var.name(), a.extent, IterKind::Spatial});
  for (auto& a : op->reduce_axes) s.iters.push_back({a.var.name(), a.extent, IterKind::Reduce});
  for (int i = 0; i < int(s.iters.size()); ++i) s.leaves.push_back(i);
  return s;
}

State::State(const te::ComputeDAG& dag) : dag_(dag) {
  for (auto& t : dag.ops()) {
    if (t->is_placeholder) continue;
    int out = -1;
    for (size_t i = 0; i < dag.outputs().size(); ++i)
      if (dag.outputs()[i].get() == t.get()) out = int(i);
    stages_.push_back(make_stage(t, out));
  }
}

int State::find(const std::string& name) const {
  for (size_t i = 0; i < stages_.size(); ++i)
    if (stages_[i].name() == name) return int(i);
  return -1;
}

const Stage& State::stage(const std::string& name) const {
  int i = find(name);
  if (i < 0) throw ScheduleError("no stage named '" + name + "'");
  return stages_[i];
}

int State::stage_index(const std::string& name) const {
  int i = find(name);
  if (i < 0) throw ScheduleError("no stage named '" + name + "'");
  return i;
}

Stage& State::mut(const std::string& name) { return stages_[stage_index(name)]; }

Tensor State::tensor(const std::string& name) const {
  int i = find(name);
  if (i >= 0) return stages_[i].op;
  for (auto& t : dag_.inputs())
    if (t->name == name) return t;
  throw ScheduleError("no tensor named '" + name + "'");
}

std::vector<std::string> State::producers(const std::string& name) const {
  std::vector<std::string> out;
  for (auto& t : stage(name).op->inputs())
    if (t->is_compute()) out.push_back(t->name);
  return out;
}

std::vector<std::string> State::consumers(const std::string& name) const {
  std::vector<std::string> out;
  std::set<std::string> seen;
  std::vector<std::string> todo{name};
  while (!todo.empty()) {
    std::string cur = todo.back();
    todo.pop_back();
    for (auto& s : stages_) {
      bool reads = false;
      for (auto& t : s.op->inputs()) reads |= t->name == cur;
      if (!reads || !seen.insert(s.name()).second) continue;
      if (s.loc == Location::Inline) todo.push_back(s.name());
      else out.push_back(s.name());
    }
  }
  return out;
}

void State::check_leaf(const Stage& s, int iter, const char* prim) const {
  if (iter < 0 || iter >= int(s.iters.size()) || s.leaf_pos(iter) < 0)
    throw ScheduleError(std::string(prim) + ": iter " + std::to_string(iter) +
                        " is not a loop of stage " + s.name());
}

void State::check_not_attach_target(const Stage& s, int iter, const char* prim) const {
  if (!attached_at(s.name(), iter).empty())
    throw ScheduleError(std::string(prim) + ": a stage is computed at loop " +
                        s.iters[iter].name + " of " + s.name());
}

std::vector<std::string> State::attached_at(const std::string& stage, int iter) const {
  std::vector<std::string> out;
  for (auto& s : stages_)
    if (s.loc == Location::At && s.attach_stage == stage && s.attach_iter == iter)
      out.push_back(s.name());
  return out;
}

// ---- loop transformations --------------------------------------------------------------

std::vector<int> State::split(const std::string& name, int iter,
                              const std::vector<int64_t>& factors) {
  Stage& s = mut(name);
  check_leaf(s, iter, "split");
  check_not_attach_target(s, iter, "split");
  if (factors.empty()) throw ScheduleError("split: no factors");
  int64_t prod = 1, limit = 0;  // a padded split: at most 64x the extent, plus 64
  if (__builtin_mul_overflow(s.iters[iter].extent, 64, &limit) ||
      __builtin_add_overflow(limit, 64, &limit))
    limit = INT64_MAX;
  for (auto f : factors) {
    if (f < 1) throw ScheduleError("split: factor " + std::to_string(f) + " < 1");
    if (__builtin_mul_overflow(prod, f, &prod) || prod > limit)
      throw ScheduleError("split: factors too large");
  }
  Iter parent = s.iters[iter];
  Relation rel{Relation::Split, {iter}, {}, factors};
  std::vector<int> ids;
  int64_t outer = (parent.extent + prod - 1) / prod;
  for (size_t k = 0; k <= factors.size(); ++k) {
    Iter it;
    it.name = parent.name + "." + std::to_string(k);
    it.extent = k == 0 ? outer : factors[k - 1];
    it.kind = parent.kind;
    ids.push_back(int(s.iters.size()));
    rel.outputs.push_back(ids.back());
    s.iters.push_back(it);
  }
  s.relations.push_back(rel);
  int pos = s.leaf_pos(iter);
  s.leaves.erase(s.leaves.begin() + pos);
  s.leaves.insert(s.leaves.begin() + pos, ids.begin(), ids.end());
  return ids;
}

int State::fuse(const std::string& name, const std::vector<int>& iters) {
  Stage& s = mut(name);
  if (iters.size() < 2) throw ScheduleError("fuse: needs at least two loops");
  int first = -1;
  for (size_t k = 0; k < iters.size(); ++k) {
    check_leaf(s, iters[k], "fuse");
    check_not_attach_target(s, iters[k], "fuse");
    int pos = s.leaf_pos(iters[k]);
    if (k == 0) first = pos;
    else if (pos != first + int(k)) throw ScheduleError("fuse: loops are not consecutive");
    if (s.iters[iters[k]].kind != s.iters[iters[0]].kind)
      throw ScheduleError("fuse: cannot fuse a spatial and a reduction loop");
  }
  Iter fused;
  fused.kind = s.iters[iters[0]].kind;
  fused.extent = 1;
  for (int i : iters) {
    fused.name += (fused.name.empty() ? "" : "@") + s.iters[i].name;
    fused.extent *= s.iters[i].extent;
  }
  int id = int(s.iters.size());
  s.iters.push_back(fused);
  s.relations.push_back({Relation::Fuse, iters, {id}, {}});
  s.leaves.erase(s.leaves.begin() + first, s.leaves.begin() + first + int(iters.size()));
  s.leaves.insert(s.leaves.begin() + first, id);
  return id;
}

void State::reorder(const std::string& name, const std::vector<int>& order) {
  Stage& s = mut(name);
  std::vector<int> a = order, b = s.leaves;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  if (a != b) throw ScheduleError("reorder: not a permutation of the loops of " + name);
  s.leaves = order;
}

void State::annotate(const std::string& name, int iter, Annotation ann) {
  Stage& s = mut(name);
  check_leaf(s, iter, annotation_name(ann));
  if (ann == Annotation::Parallel && s.iters[iter].kind == IterKind::Reduce)
    throw ScheduleError("parallel: loop " + s.iters[iter].name + " is a reduction");
  s.iters[iter].ann = ann;
}

void State::bind(const std::string& name, int iter, const std::string& tag) {
  Annotation ann = binding_of(tag);
  Stage& s = mut(name);
  check_leaf(s, iter, "bind");
  if (s.iters[iter].kind == IterKind::Reduce)
    throw ScheduleError("bind: loop " + s.iters[iter].name + " is a reduction");
  for (int id : s.leaves)
    if (id != iter && s.iters[id].ann == ann)
      throw ScheduleError("bind: " + name + " already has a loop bound to " + tag);
  s.iters[iter].ann = ann;
}

void State::set_scope(const std::string& name, const std::string& scope) {
  Stage& s = mut(name);
  if (scope == "shared") s.scope = te::MemScope::Shared;
  else if (scope == "local") s.scope = te::MemScope::Local;
  else throw ScheduleError("set_scope: unknown scope '" + scope + "' (local or shared)");
}

void State::auto_unroll(const std::string& name, int64_t max_step) {
  if (max_step < 0) throw ScheduleError("auto_unroll: negative step");
  mut(name).auto_unroll_max_step = max_step;
}

// ---- compute locations -----------------------------------------------------------------

void State::compute_at(const std::string& name, const std::string& consumer, int consumer_iter) {
  const Stage& s = stage(name);
  const Stage& c = stage(consumer);
  if (s.is_output()) throw ScheduleError("compute_at: " + name + " is an output");
  if (c.loc == Location::Inline) throw ScheduleError("compute_at: " + consumer + " is inlined");
  auto cons = consumers(name);
  if (cons.size() != 1 || cons[0] != consumer)
    throw ScheduleError("compute_at: " + consumer + " is not the only consumer of " + name);
  check_leaf(c, consumer_iter, "compute_at");
  // No cycles: the consumer must not be computed inside this stage.
  for (std::string cur = consumer; !cur.empty();) {
    if (cur == name) throw ScheduleError("compute_at: cycle through " + name);
    const Stage& x = stage(cur);
    cur = x.loc == Location::At ? x.attach_stage : "";
  }
  Stage& m = mut(name);
  m.loc = Location::At;
  m.attach_stage = consumer;
  m.attach_iter = consumer_iter;
}

void State::compute_root(const std::string& name) {
  Stage& s = mut(name);
  s.loc = Location::Root;
  s.attach_stage.clear();
  s.attach_iter = -1;
}

bool State::can_inline(const std::string& name) const {
  const Stage& s = stage(name);
  return !s.is_output() && !s.op->is_reduction();
}

void State::compute_inline(const std::string& name) {
  const Stage& s = stage(name);
  if (s.is_output()) throw ScheduleError("compute_inline: " + name + " is an output");
  if (s.op->is_reduction()) throw ScheduleError("compute_inline: " + name + " is a reduction");
  for (auto& other : stages_)
    if (other.loc == Location::At && other.attach_stage == name)
      throw ScheduleError("compute_inline: " + other.name() + " is computed inside " + name);
  Stage& m = mut(name);
  m.loc = Location::Inline;
  m.attach_stage.clear();
  m.attach_iter = -1;
}

void State::reverse_compute_inline(const std::string& name) {
  const Stage& c = stage(name);
  if (c.op->is_reduction()) throw ScheduleError("reverse_compute_inline: " + name + " is a reduction");
  // Exactly one compute producer P, read as P[axes of c] with equal extents.
  const te::OperationNode* producer = nullptr;
  bool identity = true;
  int reads = 0;
  te::post_order_visit(c.op->body, [&](const Expr& e) {
    auto* r = e.as<te::TensorReadNode>();
    if (!r || r->tensor->is_placeholder) return;
    if (producer && producer != r->tensor.get()) identity = false;
    producer = r->tensor.get();
    ++reads;
    if (r->indices.size() != c.op->axes.size()) {
      identity = false;
      return;
    }
    for (size_t d = 0; d < r->indices.size(); ++d)
      if (!r->indices[d].same_as(c.op->axes[d].var) ||
          r->tensor->shape[d] != c.op->axes[d].extent)
        identity = false;
  });
  if (!producer || !identity)
    throw ScheduleError("reverse_compute_inline: " + name +
                        " does not read one producer elementwise");
  const Stage& p = stage(producer->name);
  if (p.op->is_reduction() || p.is_output() || p.loc == Location::Inline)
    throw ScheduleError("reverse_compute_inline: producer " + p.name() + " cannot be inlined");
  if (consumers(p.name()).size() != 1)
    throw ScheduleError("reverse_compute_inline: " + p.name() + " has other consumers");
  for (auto& other : stages_)
    if (other.loc == Location::At && other.attach_stage == name)
      throw ScheduleError("reverse_compute_inline: a stage is computed inside " + name);
  if (c.loc == Location::At)
    throw ScheduleError("reverse_compute_inline: " + name + " has a compute location");
  // c takes over p's loops and location; p is inlined into it.
  Stage& cm = mut(name);
  Stage pm = stage(p.name());
  cm.iters = pm.iters;
  cm.leaves = pm.leaves;
  cm.relations = pm.relations;
  cm.loc = pm.loc;
  cm.attach_stage = pm.attach_stage;
  cm.attach_iter = pm.attach_iter;
  cm.auto_unroll_max_step = pm.auto_unroll_max_step;
  for (auto& other : stages_)
    if (other.loc == Location::At && other.attach_stage == pm.name()) other.attach_stage = name;
  Stage& pmut = mut(pm.name());
  pmut.loc = Location::Inline;
  pmut.attach_stage.clear();
  pmut.attach_iter = -1;
  // Keep producer-before-consumer order: move c to where p was.
  int pi = stage_index(pm.name()), ci = stage_index(name);
  if (ci > pi + 1) {
    Stage moved = stages_[ci];
    stages_.erase(stages_.begin() + ci);
    stages_.insert(stages_.begin() + pi + 1, moved);
  }
}

// ---- DAG rewrites ----------------------------------------------------------------------

namespace {

// A copy of op with a new body (and possibly name/tag), keeping its axis variables.
Tensor with_body(const Tensor& op, Expr body, std::string name, std::string tag,
                 std::vector<IterVar> axes, std::vector<IterVar> reduce_axes) {
  auto n = std::make_shared<te::OperationNode>(*op);
  n->name = std::move(name);
  n->set_body(std::move(body));
  n->tag = std::move(tag);
  n->axes = std::move(axes);
  n->reduce_axes = std::move(reduce_axes);
  return Tensor(std::move(n));
}

// Swaps reads of the ops in `to` (old op -> its new version), except `skipped`.
class ReadReplacer : public te::IRMutator {
 public:
  ReadReplacer(const std::unordered_map<const te::OperationNode*, Tensor>& to, const te::OperationNode* skipped)
      : to_(to), skipped_(skipped) {}

 protected:
  Expr visit_TensorRead(const te::TensorReadNode* op, const Expr& e) override {
    Expr r = IRMutator::visit_TensorRead(op, e);
    auto* rr = r.as<te::TensorReadNode>();
    auto it = to_.find(rr->tensor.get());
    if (it == to_.end() || it->first == skipped_) return r;
    return it->second(rr->indices);
  }

 private:
  const std::unordered_map<const te::OperationNode*, Tensor>& to_;
  const te::OperationNode* skipped_;
};

bool transformed(const Stage& s) {
  if (!s.relations.empty()) return true;
  for (int i = 0; i < int(s.leaves.size()); ++i)
    if (s.leaves[i] != i) return true;
  for (auto& it : s.iters)
    if (it.ann != Annotation::None) return true;
  return false;
}

}  // namespace

void State::replace_reads(const Tensor& from, const Tensor& to, const std::string& skip) {
  // One pass in producer-before-consumer order: a rewritten stage's readers come later and
  // swap their reads of it too. (Recursing per reader instead visits every path through the
  // DAG: exponential on an unrolled LSTM, whose states are each read twice.)
  std::unordered_map<const te::OperationNode*, Tensor> to_new = {{from.get(), to}};
  for (auto& s : stages_) {
    ReadReplacer rr(to_new, s.name() == skip ? from.get() : nullptr);
    Expr body = rr.mutate(s.op->body);
    if (body.same_as(s.op->body)) continue;
    Tensor old = s.op;
    s.op = with_body(old, body, old->name, old->tag, old->axes, old->reduce_axes);
    to_new[old.get()] = s.op;
  }
}

std::string State::cache_write(const std::string& name) {
  const Stage& s = stage(name);
  if (s.loc == Location::Inline) throw ScheduleError("cache_write: " + name + " is inlined");
  if (transformed(s)) throw ScheduleError("cache_write: " + name + " already has loop transforms");
  for (int i = 0; i < int(s.iters.size()); ++i) check_not_attach_target(s, i, "cache_write");
  std::string local_name = name + ".local";
  if (find(local_name) >= 0) throw ScheduleError("cache_write: " + local_name + " exists");
  Tensor old = s.op;
  // The local stage computes what the stage did; the stage copies it out.
  Tensor local = with_body(old, old->body, local_name, old->tag, old->axes, old->reduce_axes);
  std::vector<IterVar> axes;
  std::vector<Expr> idx;
  for (auto& a : old->axes) {
    axes.push_back({Var(a.var.name()), a.extent, false});
    idx.push_back(axes.back().var);
  }
  Tensor copy = with_body(old, local(idx), name, "cache_write", axes, {});
  Stage local_stage = make_stage(local, -1);
  int si = stage_index(name);
  Stage& sm = stages_[si];
  Stage copy_stage = make_stage(copy, sm.output_index);
  copy_stage.loc = sm.loc;
  copy_stage.attach_stage = sm.attach_stage;
  copy_stage.attach_iter = sm.attach_iter;
  stages_[si] = copy_stage;
  stages_.insert(stages_.begin() + si, local_stage);
  replace_reads(old, copy, name);
  return local_name;
}

std::string State::cache_read(const std::string& tname, const std::vector<std::string>& readers) {
  Tensor t = tensor(tname);
  if (readers.empty()) throw ScheduleError("cache_read: no readers");
  std::string cname = tname + ".cache";
  if (find(cname) >= 0) throw ScheduleError("cache_read: " + cname + " exists");
  int first = int(stages_.size());
  for (auto& r : readers) {
    const Stage& rs = stage(r);
    bool reads = false;
    for (auto& in : rs.op->inputs()) reads |= in.get() == t.get();
    if (!reads) throw ScheduleError("cache_read: " + r + " does not read " + tname);
    if (rs.loc == Location::Inline) throw ScheduleError("cache_read: reader " + r + " is inlined");
    first = std::min(first, stage_index(r));
  }
  Tensor cache = te::compute(
      t->shape, [&](const std::vector<Var>& ax) { return t(std::vector<Expr>(ax.begin(), ax.end())); },
      cname, "cache_read");
  for (auto& r : readers) {
    Stage& rs = mut(r);
    Tensor old = rs.op;
    std::unordered_map<const te::OperationNode*, Tensor> to_cache = {{t.get(), cache}};
    ReadReplacer rr(to_cache, nullptr);
    rs.op = with_body(old, rr.mutate(old->body), old->name, old->tag, old->axes, old->reduce_axes);
    replace_reads(old, rs.op, r);
  }
  stages_.insert(stages_.begin() + first, make_stage(cache, -1));
  return cname;
}

std::string State::rfactor(const std::string& name, int reduce_iter, int64_t factor) {
  const Stage& s = stage(name);
  auto* red = s.op->body.as<te::ReduceNode>();
  if (!red) throw ScheduleError("rfactor: " + name + " is not a reduction");
  if (transformed(s)) throw ScheduleError("rfactor: " + name + " already has loop transforms");
  int nax = int(s.op->axes.size());
  int r = reduce_iter - nax;
  if (r < 0 || r >= int(s.op->reduce_axes.size()))
    throw ScheduleError("rfactor: iter " + std::to_string(reduce_iter) + " is not a reduction axis");
  if (factor < 2) throw ScheduleError("rfactor: factor must be >= 2");
  // A larger factor only adds partial sums of nothing (and a buffer that size).
  if (factor > s.op->reduce_axes[r].extent)
    throw ScheduleError("rfactor: factor " + std::to_string(factor) + " exceeds the axis' extent " +
                        std::to_string(s.op->reduce_axes[r].extent));
  if (s.loc != Location::Root) throw ScheduleError("rfactor: " + name + " has a compute location");
  for (int i = 0; i < int(s.iters.size()); ++i) check_not_attach_target(s, i, "rfactor");
  std::string rf_name = name + ".rf";
  if (find(rf_name) >= 0) throw ScheduleError("rfactor: " + rf_name + " exists");
  const IterVar& target = s.op->reduce_axes[r];
  int64_t outer = (target.extent + factor - 1) / factor;

  // name.rf[axes..., f] = reduce over (other reduce axes, ro) of source[r := ro*factor + f]
  std::vector<IterVar> rf_axes;
  te::VarMap vmap;
  for (auto& a : s.op->axes) {
    rf_axes.push_back({Var(a.var.name()), a.extent, false});
    vmap[a.var.get()] = rf_axes.back().var;
  }
  rf_axes.push_back({Var(target.var.name() + ".f"), factor, false});
  std::vector<IterVar> rf_reduce;
  for (int k = 0; k < int(s.op->reduce_axes.size()); ++k) {
    auto& a = s.op->reduce_axes[k];
    if (k == r) {
      rf_reduce.push_back({Var(a.var.name() + ".o"), outer, true});
      vmap[a.var.get()] = rf_reduce.back().var * te::make_int(factor) + rf_axes.back().var;
    } else {
      rf_reduce.push_back({Var(a.var.name()), a.extent, true});
      vmap[a.var.get()] = rf_reduce.back().var;
    }
  }
  Expr src = te::substitute(red->source, vmap);
  if (target.extent % factor != 0) {
    Expr in_range = vmap[target.var.get()] < te::make_int(target.extent);
    src = te::if_then_else(in_range, src, te::reduce_identity(red->combiner, src.type()));
  }
  std::vector<int64_t> rf_shape = s.op->shape;
  rf_shape.push_back(factor);
  auto rf_node = std::make_shared<te::OperationNode>(*s.op);
  rf_node->name = rf_name;
  rf_node->shape = rf_shape;
  rf_node->axes = rf_axes;
  rf_node->reduce_axes = rf_reduce;
  rf_node->set_body(te::reduce(red->combiner, src, rf_reduce));
  rf_node->tag = "rfactor";
  Tensor rf(std::move(rf_node));

  // name[axes] = reduce over f of name.rf[axes..., f]
  std::vector<IterVar> axes;
  std::vector<Expr> idx;
  for (auto& a : s.op->axes) {
    axes.push_back({Var(a.var.name()), a.extent, false});
    idx.push_back(axes.back().var);
  }
  IterVar f{Var(target.var.name() + ".f"), factor, true};
  idx.push_back(f.var);
  Tensor old = s.op;
  Tensor final_op = with_body(old, te::reduce(red->combiner, rf(idx), {f}), name, old->tag, axes, {f});
  int si = stage_index(name);
  int out = stages_[si].output_index;
  stages_[si] = make_stage(final_op, out);
  stages_.insert(stages_.begin() + si, make_stage(rf, -1));
  replace_reads(old, final_op, name);
  return rf_name;
}

std::string State::str() const {
  std::ostringstream os;
  for (auto& s : stages_) {
    os << s.name();
    if (s.loc == Location::Inline) os << " (inlined)";
    if (s.loc == Location::At) os << " (at " << s.attach_stage << "." << stage(s.attach_stage).iters[s.attach_iter].name << ")";
    os << ":";
    for (int id : s.leaves) {
      auto& it = s.iters[id];
      os << " " << it.name << "[" << it.extent << "]";
      if (it.kind == IterKind::Reduce) os << "r";
      if (it.ann != Annotation::None) os << "@" << annotation_name(it.ann);
    }
    if (s.auto_unroll_max_step) os << " unroll<=" << s.auto_unroll_max_step;
    os << "\n";
  }
  return os.str();
}

}  // namespace tuner::schedule
