// Loop-nest generation: turns a schedule State into loop IR. Inlined stages are substituted
// into their readers; each remaining stage becomes a loop nest over its leaf iterators, with
// the original axes recovered through the split/fuse relations and guarded where a split does
// not divide. A stage computed at a consumer's loop gets the region the consumer reads inside
// that loop (bound inference), a local buffer of that size, and is placed in that loop.
#include "schedule/loop_nest.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "support/error.h"
#include "te/bounds.h"
#include "te/functor.h"
#include "te/simplify.h"

namespace tuner::schedule {

using namespace te;

namespace {

struct Storage {
  Buffer buf;
  std::vector<Expr> offset;  // a read of the tensor at idx reads buf[idx - offset]
};

// The storage order of a local buffer for stage `s`: its axes ordered by the innermost leaf
// loop that sweeps each of them, so the innermost-swept axis (vectorized, typically) is
// contiguous. Unrolled innermost loops do not count (their axes go outermost): the loop
// around them is the one to keep contiguous (a padding block filled for both column
// parities per pair keeps each parity's pairs contiguous for its reader). Empty when that
// is the row-major order anyway.
std::vector<int> local_dim_order(const Stage& s) {
  int nax = int(s.op->axes.size());
  // roots[i]: the op axes iterator i derives from (through splits and fuses).
  std::vector<std::set<int>> roots(s.iters.size());
  for (int a = 0; a < nax; ++a) roots[size_t(a)] = {a};
  for (const Relation& r : s.relations) {
    std::set<int> in;
    for (int i : r.inputs) in.insert(roots[size_t(i)].begin(), roots[size_t(i)].end());
    for (int o : r.outputs) roots[size_t(o)] = in;
  }
  size_t swept = s.leaves.size();
  while (swept > 1 && s.iters[size_t(s.leaves[swept - 1])].ann == Annotation::Unroll) --swept;
  std::vector<int> pos(size_t(nax), -1);
  for (size_t q = 0; q < swept; ++q)
    for (int a : roots[size_t(s.leaves[q])]) pos[size_t(a)] = int(q);
  std::vector<int> order(static_cast<size_t>(nax));
  for (int a = 0; a < nax; ++a) order[size_t(a)] = a;
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return pos[size_t(a)] < pos[size_t(b)]; });
  for (int a = 0; a < nax; ++a)
    if (order[size_t(a)] != a) return order;
  return {};
}

class NestBuilder {
 public:
  explicit NestBuilder(const State& st) : st_(st) {
    for (auto& s : st.stages()) by_op_[s.op.get()] = &s;
  }

  LoopNest build() {
    LoopNest out;
    for (auto& t : st_.dag().inputs()) {
      Buffer b = make_buffer(t->name, t->dtype, t->shape);
      storage_[t.get()] = {b, zeros(int(t->shape.size()))};
      out.args.push_back(b);
    }
    std::vector<Buffer> outputs(st_.dag().outputs().size());
    std::vector<Buffer> roots;
    for (auto& s : st_.stages()) {
      if (s.is_output()) {
        outputs[s.output_index] = make_buffer(st_.dag().outputs()[s.output_index]->name,
                                              s.op->dtype, s.op->shape);
        storage_[s.op.get()] = {outputs[s.output_index], zeros(int(s.op->shape.size()))};
      } else if (s.loc == Location::Root) {
        roots.push_back(make_buffer(s.name(), s.op->dtype, s.op->shape));
        storage_[s.op.get()] = {roots.back(), zeros(int(s.op->shape.size()))};
      }
    }
    for (auto& b : outputs) INTERNAL_CHECK(b) << "an output has no stage";
    out.args.insert(out.args.end(), outputs.begin(), outputs.end());

    std::vector<Stmt> body;
    for (auto& s : st_.stages()) {
      if (s.loc != Location::Root) continue;
      std::vector<Expr> mins = zeros(int(s.op->shape.size()));
      body.push_back(make_stage(s, mins, s.op->shape));
    }
    Stmt result = seq(body);
    for (auto it = roots.rbegin(); it != roots.rend(); ++it) result = allocate(*it, result);
    out.body = result;
    return out;
  }

 private:
  static std::vector<Expr> zeros(int n) { return std::vector<Expr>(n, make_int(0)); }

  // The stage's body with every inlined producer substituted.
  Expr effective_body(const Stage& s) {
    auto it = effective_.find(s.name());
    if (it != effective_.end()) return it->second;
    class Inliner : public IRMutator {
     public:
      explicit Inliner(NestBuilder* b) : b_(b) {}
      Expr visit_TensorRead(const TensorReadNode* op, const Expr& e) override {
        Expr r = IRMutator::visit_TensorRead(op, e);
        auto* rr = r.as<TensorReadNode>();
        auto sit = b_->by_op_.find(rr->tensor.get());
        if (sit == b_->by_op_.end() || sit->second->loc != Location::Inline) return r;
        const Stage& p = *sit->second;
        VarMap m;
        for (size_t d = 0; d < p.op->axes.size(); ++d) m[p.op->axes[d].var.get()] = rr->indices[d];
        return substitute(b_->effective_body(p), m);
      }
      NestBuilder* b_;
    };
    Expr body = Inliner(this).mutate(s.op->body);
    effective_[s.name()] = body;
    return body;
  }

  // Replaces tensor reads by loads from their storage.
  Expr lower_reads(const Expr& e) {
    class Lowerer : public IRMutator {
     public:
      explicit Lowerer(NestBuilder* b) : b_(b) {}
      Expr visit_TensorRead(const TensorReadNode* op, const Expr& e) override {
        Expr r = IRMutator::visit_TensorRead(op, e);
        auto* rr = r.as<TensorReadNode>();
        auto it = b_->storage_.find(rr->tensor.get());
        INTERNAL_CHECK(it != b_->storage_.end())
            << "tensor " << rr->tensor->name << " is read before it is computed";
        std::vector<Expr> idx;
        for (size_t d = 0; d < rr->indices.size(); ++d)
          idx.push_back(rr->indices[d] - it->second.offset[d]);
        return buffer_load(it->second.buf, idx);
      }
      NestBuilder* b_;
    };
    return Lowerer(this).mutate(e);
  }

  // Region of `t` read by `body` when `inner` variables sweep their ranges: per dimension a
  // (min expression, constant extent), clamped to the tensor's shape.
  void infer_region(const Expr& body, const OperationNode* t, const std::set<const VarNode*>& inner,
                    std::vector<Expr>* mins, std::vector<int64_t>* exts) {
    int nd = int(t->shape.size());
    std::vector<bool> full(nd, false), seen(nd, false);
    std::vector<Expr> base(nd);
    std::vector<int64_t> lo(nd, 0), hi(nd, 0);
    auto uses_inner = [&](const Expr& e) {
      bool u = false;
      post_order_visit(e, [&](const Expr& x) {
        if (auto* v = x.as<VarNode>()) u |= inner.count(v) > 0;
      });
      return u;
    };
    auto reads_data = [](const Expr& e) {  // an index read from a tensor (gather)
      bool r = false;
      post_order_visit(e, [&](const Expr& x) { r |= x.as<TensorReadNode>() != nullptr; });
      return r;
    };
    post_order_visit(body, [&](const Expr& e) {
      auto* r = e.as<TensorReadNode>();
      if (!r || r->tensor.get() != t) return;
      for (int d = 0; d < nd; ++d) {
        if (full[d]) continue;
        Expr idx = simplify(r->indices[d], ranges_);
        LinearForm lf = to_linear(idx), b;
        int64_t l = lf.constant, h = lf.constant;
        for (auto& [atom, coef] : lf.terms) {
          if (reads_data(atom)) {  // data-dependent: any element may be read
            full[d] = true;
            break;
          }
          if (!uses_inner(atom)) {
            b.add(atom, coef);
            continue;
          }
          IntBound bd = const_int_bound(atom * make_int(coef), ranges_);
          if (!bd.bounded()) {
            full[d] = true;
            break;
          }
          l += bd.lo;
          h += bd.hi;
        }
        if (full[d]) continue;
        Expr be = simplify(b.to_expr(), ranges_);
        if (!seen[d]) {
          seen[d] = true;
          base[d] = be;
          lo[d] = l;
          hi[d] = h;
        } else if (deep_equal(base[d], be)) {
          lo[d] = std::min(lo[d], l);
          hi[d] = std::max(hi[d], h);
        } else {
          full[d] = true;
        }
      }
    });
    mins->clear();
    exts->clear();
    for (int d = 0; d < nd; ++d) {
      int64_t ext = hi[d] - lo[d] + 1;
      if (full[d] || !seen[d] || ext >= t->shape[d]) {
        mins->push_back(make_int(0));
        exts->push_back(t->shape[d]);
      } else {
        mins->push_back(simplify(base[d] + make_int(lo[d]), ranges_));
        exts->push_back(ext);
      }
    }
  }

  static ForKind kind_of(Annotation a) {
    switch (a) {
      case Annotation::Parallel: return ForKind::Parallel;
      case Annotation::Vectorize: return ForKind::Vectorized;
      case Annotation::Unroll: return ForKind::Unrolled;
      case Annotation::BlockX: return ForKind::BlockIdxX;
      case Annotation::BlockY: return ForKind::BlockIdxY;
      case Annotation::BlockZ: return ForKind::BlockIdxZ;
      case Annotation::ThreadX: return ForKind::ThreadIdxX;
      case Annotation::ThreadY: return ForKind::ThreadIdxY;
      case Annotation::ThreadZ: return ForKind::ThreadIdxZ;
      case Annotation::VThread: return ForKind::VThread;
      default: return ForKind::Serial;
    }
  }

  Stmt make_stage(const Stage& s, const std::vector<Expr>& root_min,
                  const std::vector<int64_t>& root_ext) {
    const OperationNode& op = *s.op;
    int nax = int(op.axes.size());
    int nroot = s.num_root_iters();
    // 1. Extents of every iter, from the root extents through the relations.
    std::vector<int64_t> ext(s.iters.size(), 0);
    for (int i = 0; i < nroot; ++i) ext[i] = i < nax ? root_ext[i] : op.reduce_axes[i - nax].extent;
    for (auto& rel : s.relations) {
      if (rel.kind == Relation::Split) {
        // A level runs no further than its parent needs: a stage computed inside a consumer's
        // tile has a smaller extent than its factors were sampled for (levels the consumer's
        // loops already sweep get extent 1), and the surplus iterations would all be guarded
        // out — a 32-row tile split [4, 16, 2] would sweep 128 rows with 96 of them idle.
        int64_t parent = ext[rel.inputs[0]], stride = 1;
        for (size_t k = rel.factors.size(); k-- > 0;) {
          ext[rel.outputs[k + 1]] = std::min(rel.factors[k], (parent + stride - 1) / stride);
          stride *= rel.factors[k];
        }
        ext[rel.outputs[0]] = (parent + stride - 1) / stride;
      } else {
        int64_t e = 1;
        for (int in : rel.inputs) e *= ext[in];
        ext[rel.outputs[0]] = e;
      }
    }
    // 2. A variable per leaf, and every iter's value from the leaves (pass-up).
    std::vector<Expr> value(s.iters.size());
    std::vector<Var> leaf_var;
    for (int id : s.leaves) {
      leaf_var.emplace_back(s.iters[id].name);
      value[id] = leaf_var.back();
      ranges_[leaf_var.back().get()] = {0, ext[id] - 1};
      Annotation a = s.iters[id].ann;
      if (a >= Annotation::ThreadX && a <= Annotation::ThreadZ) thread_vars_.insert(leaf_var.back().get());
    }
    for (auto it = s.relations.rbegin(); it != s.relations.rend(); ++it) {
      if (it->kind == Relation::Split) {
        Expr v = value[it->outputs[0]];
        for (size_t k = 0; k < it->factors.size(); ++k)
          v = v * make_int(it->factors[k]) + value[it->outputs[k + 1]];
        value[it->inputs[0]] = v;
      } else {
        Expr fused = value[it->outputs[0]];
        int64_t inner = 1;
        for (int k = int(it->inputs.size()) - 1; k >= 0; --k) {
          Expr q = inner == 1 ? fused : floordiv(fused, make_int(inner));
          value[it->inputs[k]] = k == 0 ? q : floormod(q, make_int(ext[it->inputs[k]]));
          inner *= ext[it->inputs[k]];
        }
      }
    }
    // 3. Axis values and the guards that keep non-dividing splits in range.
    VarMap axis_map;
    std::vector<Expr> global(nax);
    Expr spatial_cond = make_int(1, DataType::boolean());
    Expr reduce_cond = spatial_cond;
    for (int d = 0; d < nroot; ++d) {
      Expr local = value[d];
      if (d < nax) {
        global[d] = simplify(root_min[d] + local, ranges_);
        axis_map[op.axes[d].var.get()] = global[d];
        spatial_cond = logical_and(spatial_cond, local < make_int(root_ext[d]));
        if (!is_const(root_min[d], 0) || root_ext[d] != op.shape[d]) {
          spatial_cond = logical_and(spatial_cond, global[d] < make_int(op.shape[d]));
          spatial_cond = logical_and(spatial_cond, global[d] >= make_int(0));
        }
      } else {
        axis_map[op.reduce_axes[d - nax].var.get()] = local;
        reduce_cond = logical_and(reduce_cond, local < make_int(ext[d]));
      }
    }
    // A split that does not divide its parent can take the parent past its extent; root
    // axes are guarded above, derived iterators here (e.g. a loop of extent 4 split by 5).
    for (auto& rel : s.relations) {
      if (rel.kind != Relation::Split || rel.inputs[0] < nroot) continue;
      // The values the levels sweep: [0, span); exact when the split divides its parent.
      int64_t span = 1, stride = 1;
      for (size_t k = rel.factors.size() + 1; k-- > 0;) {
        span += (ext[rel.outputs[k]] - 1) * stride;
        if (k > 0) stride *= rel.factors[k - 1];
      }
      int in = rel.inputs[0];
      if (span == ext[in]) continue;
      Expr c = value[in] < make_int(ext[in]);
      if (s.iters[in].kind == IterKind::Spatial) spatial_cond = logical_and(spatial_cond, c);
      else reduce_cond = logical_and(reduce_cond, c);
    }
    spatial_cond = simplify(spatial_cond, ranges_);
    reduce_cond = simplify(reduce_cond, ranges_);

    Expr body_expr = substitute(effective_body(s), axis_map);
    const Storage& store = storage_.at(s.op.get());
    std::vector<Expr> store_idx;
    for (int d = 0; d < nax; ++d) store_idx.push_back(global[d] - store.offset[d]);

    // 4. Stages computed at this stage's loops: region, local buffer, nest.
    int nleaf = int(s.leaves.size());
    std::vector<std::vector<Stmt>> prefix(nleaf);
    std::vector<std::vector<Buffer>> allocs(nleaf);
    for (auto& other : st_.stages()) {
      if (other.loc != Location::At || other.attach_stage != s.name()) continue;
      int p = s.leaf_pos(other.attach_iter);
      INTERNAL_CHECK(p >= 0) << other.name() << " is attached to a loop that is not a leaf";
      std::set<const VarNode*> inner;
      for (int q = p + 1; q < nleaf; ++q) inner.insert(leaf_var[q].get());
      // A shared buffer serves every thread of the block: the enclosing loops bound to
      // thread indices sweep their ranges too.
      if (other.scope == MemScope::Shared) inner.insert(thread_vars_.begin(), thread_vars_.end());
      std::vector<Expr> mins;
      std::vector<int64_t> exts;
      infer_region(body_expr, other.op.get(), inner, &mins, &exts);
      Buffer b = make_buffer(other.name(), other.op->dtype, exts, other.scope,
                             local_dim_order(other));
      storage_[other.op.get()] = {b, mins};
      allocs[p].push_back(b);
      prefix[p].push_back(make_stage(other, mins, exts));
    }

    // 5. The statements: a store, or a reduction's init and update.
    auto* red = body_expr.as<ReduceNode>();
    int r0 = nleaf;  // first leaf that is a reduction loop
    for (int q = 0; q < nleaf; ++q)
      if (s.iters[s.leaves[q]].kind == IterKind::Reduce) {
        r0 = q;
        break;
      }
    Stmt main, init;
    if (!red) {
      main = if_then_else_stmt(spatial_cond, buffer_store(store.buf, lower_reads(body_expr), store_idx));
    } else {
      Expr cur = buffer_load(store.buf, store_idx);
      Expr src = lower_reads(red->source);
      Expr combined;
      switch (red->combiner) {
        case ReduceKind::Sum: combined = cur + src; break;
        case ReduceKind::Prod: combined = cur * src; break;
        case ReduceKind::Max: combined = max(cur, src); break;
        case ReduceKind::Min: combined = min(cur, src); break;
      }
      main = if_then_else_stmt(logical_and(spatial_cond, reduce_cond),
                               buffer_store(store.buf, combined, store_idx));
      // Init: the spatial loops inside the first reduction loop, with fresh variables.
      VarMap fresh;
      std::vector<std::pair<Var, int>> init_loops;
      for (int q = r0 + 1; q < nleaf; ++q) {
        if (s.iters[s.leaves[q]].kind != IterKind::Spatial) continue;
        Var v(leaf_var[q].name() + ".init");
        fresh[leaf_var[q].get()] = v;
        init_loops.push_back({v, q});
      }
      std::vector<Expr> init_idx;
      for (auto& i : store_idx) init_idx.push_back(substitute(i, fresh));
      init = if_then_else_stmt(substitute(spatial_cond, fresh),
                               buffer_store(store.buf, reduce_identity(red->combiner, op.dtype), init_idx));
      for (auto it = init_loops.rbegin(); it != init_loops.rend(); ++it) {
        // A loop bound to a GPU index keeps its binding, so each thread initializes the
        // elements it accumulates.
        Annotation a = s.iters[s.leaves[it->second]].ann;
        ForKind k = a == Annotation::Vectorize ? ForKind::Vectorized
                    : is_binding(a)            ? kind_of(a)
                                               : ForKind::Serial;
        init = make_for(it->first, make_int(0), make_int(ext[s.leaves[it->second]]), k, init);
      }
    }

    // 6. Loop kinds, with auto-unroll of the innermost loops.
    std::vector<ForKind> kinds(nleaf);
    for (int q = 0; q < nleaf; ++q) kinds[q] = kind_of(s.iters[s.leaves[q]].ann);
    if (s.auto_unroll_max_step > 0) {
      int64_t prod = 1;
      for (int q = nleaf - 1; q >= 0; --q) {
        prod *= ext[s.leaves[q]];
        if (prod > s.auto_unroll_max_step) break;
        if (kinds[q] == ForKind::Serial) kinds[q] = ForKind::Unrolled;
      }
    }

    // 7. Assemble from the innermost loop outwards. The body of loop q holds the stages
    // computed at q, the reduction init when the next loop is the first reduction loop, then
    // loop q+1.
    Stmt stmt = main;
    for (int q = nleaf - 1; q >= 0; --q) {
      std::vector<Stmt> parts = prefix[q];
      if (red && q == r0 - 1) parts.push_back(init);
      parts.push_back(stmt);
      stmt = seq(parts);
      for (auto& b : allocs[q]) stmt = allocate(b, stmt);
      stmt = make_for(leaf_var[q], make_int(0), make_int(ext[s.leaves[q]]), kinds[q], stmt);
    }
    if (red && r0 == 0) stmt = seq({init, stmt});
    for (auto& v : leaf_var) {
      ranges_.erase(v.get());
      thread_vars_.erase(v.get());
    }
    return stmt;
  }

  const State& st_;
  std::unordered_map<const OperationNode*, const Stage*> by_op_;
  std::unordered_map<std::string, Expr> effective_;
  std::unordered_map<const OperationNode*, Storage> storage_;
  RangeMap ranges_;
  std::set<const VarNode*> thread_vars_;  // enclosing loops bound to threadIdx.*
};

}  // namespace

LoopNest build_loop_nests(const State& state) { return NestBuilder(state).build(); }

}  // namespace tuner::schedule
