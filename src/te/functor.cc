#include "te/functor.h"

#include <set>

namespace tuner::te {

// ---- IRVisitor -------------------------------------------------------------------------

void IRVisitor::visit(const Expr& e) {
  switch (e.kind()) {
#define TUNER_EXPR(T) \
  case NodeKind::T: return visit_##T(static_cast<const T##Node*>(e.get()), e);
#include "te/IRNodes.def"
    default: INTERNAL_CHECK(false) << "not an expression";
  }
}

void IRVisitor::visit(const Stmt& s) {
  switch (s.kind()) {
#define TUNER_STMT(T) \
  case NodeKind::T: return visit_##T(static_cast<const T##Node*>(s.get()), s);
#include "te/IRNodes.def"
    default: INTERNAL_CHECK(false) << "not a statement";
  }
}

void IRVisitor::visit_IntImm(const IntImmNode*, const Expr&) {}
void IRVisitor::visit_FloatImm(const FloatImmNode*, const Expr&) {}
void IRVisitor::visit_Var(const VarNode*, const Expr&) {}
#define TUNER_BINARY(T, op)                                   \
  void IRVisitor::visit_##T(const T##Node* op_, const Expr&) { \
    visit(op_->a);                                            \
    visit(op_->b);                                            \
  }
#include "te/IRNodes.def"
void IRVisitor::visit_Not(const NotNode* op, const Expr&) { visit(op->a); }
void IRVisitor::visit_Select(const SelectNode* op, const Expr&) {
  visit(op->cond);
  visit(op->t);
  visit(op->f);
}
void IRVisitor::visit_Cast(const CastNode* op, const Expr&) { visit(op->value); }
void IRVisitor::visit_Call(const CallNode* op, const Expr&) {
  for (auto& a : op->args) visit(a);
}
void IRVisitor::visit_Ramp(const RampNode* op, const Expr&) {
  visit(op->base);
  visit(op->stride);
}
void IRVisitor::visit_Broadcast(const BroadcastNode* op, const Expr&) { visit(op->value); }
void IRVisitor::visit_TensorRead(const TensorReadNode* op, const Expr&) {
  for (auto& i : op->indices) visit(i);
}
void IRVisitor::visit_BufferLoad(const BufferLoadNode* op, const Expr&) {
  for (auto& i : op->indices) visit(i);
}
void IRVisitor::visit_Reduce(const ReduceNode* op, const Expr&) { visit(op->source); }

void IRVisitor::visit_For(const ForNode* op, const Stmt&) {
  visit(op->min);
  visit(op->extent);
  visit(op->body);
}
void IRVisitor::visit_BufferStore(const BufferStoreNode* op, const Stmt&) {
  visit(op->value);
  for (auto& i : op->indices) visit(i);
}
void IRVisitor::visit_Allocate(const AllocateNode* op, const Stmt&) { visit(op->body); }
void IRVisitor::visit_IfThenElse(const IfThenElseNode* op, const Stmt&) {
  visit(op->cond);
  visit(op->then_case);
  if (op->else_case) visit(op->else_case);
}
void IRVisitor::visit_SeqStmt(const SeqStmtNode* op, const Stmt&) {
  for (auto& s : op->seq) visit(s);
}
void IRVisitor::visit_Barrier(const BarrierNode*, const Stmt&) {}

// ---- IRMutator -------------------------------------------------------------------------

Expr IRMutator::mutate(const Expr& e) {
  switch (e.kind()) {
#define TUNER_EXPR(T) \
  case NodeKind::T: return visit_##T(static_cast<const T##Node*>(e.get()), e);
#include "te/IRNodes.def"
    default: INTERNAL_CHECK(false) << "not an expression";
  }
}

Stmt IRMutator::mutate(const Stmt& s) {
  switch (s.kind()) {
#define TUNER_STMT(T) \
  case NodeKind::T: return visit_##T(static_cast<const T##Node*>(s.get()), s);
#include "te/IRNodes.def"
    default: INTERNAL_CHECK(false) << "not a statement";
  }
}

std::vector<Expr> IRMutator::mutate_all(const std::vector<Expr>& v, bool* changed) {
  std::vector<Expr> out;
  out.reserve(v.size());
  for (auto& x : v) {
    out.push_back(mutate(x));
    if (!out.back().same_as(x)) *changed = true;
  }
  return out;
}

Expr IRMutator::visit_IntImm(const IntImmNode*, const Expr& e) { return e; }
Expr IRMutator::visit_FloatImm(const FloatImmNode*, const Expr& e) { return e; }
Expr IRMutator::visit_Var(const VarNode*, const Expr& e) { return e; }
#define TUNER_BINARY(T, op)                                          \
  Expr IRMutator::visit_##T(const T##Node* op_, const Expr& e) {      \
    Expr a = mutate(op_->a), b = mutate(op_->b);                     \
    if (a.same_as(op_->a) && b.same_as(op_->b)) return e;             \
    return make_binary(NodeKind::T, std::move(a), std::move(b));      \
  }
#include "te/IRNodes.def"
Expr IRMutator::visit_Not(const NotNode* op, const Expr& e) {
  Expr a = mutate(op->a);
  return a.same_as(op->a) ? e : make_not(a);
}
Expr IRMutator::visit_Select(const SelectNode* op, const Expr& e) {
  Expr c = mutate(op->cond), t = mutate(op->t), f = mutate(op->f);
  if (c.same_as(op->cond) && t.same_as(op->t) && f.same_as(op->f)) return e;
  return select(c, t, f);
}
Expr IRMutator::visit_Cast(const CastNode* op, const Expr& e) {
  Expr v = mutate(op->value);
  if (v.same_as(op->value)) return e;
  return cast(op->type.with_lanes(v.type().lanes), v);
}
Expr IRMutator::visit_Call(const CallNode* op, const Expr& e) {
  bool changed = false;
  auto args = mutate_all(op->args, &changed);
  return changed ? call(op->op, std::move(args)) : e;
}
Expr IRMutator::visit_Ramp(const RampNode* op, const Expr& e) {
  Expr b = mutate(op->base), s = mutate(op->stride);
  if (b.same_as(op->base) && s.same_as(op->stride)) return e;
  return ramp(b, s, op->lanes);
}
Expr IRMutator::visit_Broadcast(const BroadcastNode* op, const Expr& e) {
  Expr v = mutate(op->value);
  return v.same_as(op->value) ? e : broadcast(v, op->lanes);
}
Expr IRMutator::visit_TensorRead(const TensorReadNode* op, const Expr& e) {
  bool changed = false;
  auto idx = mutate_all(op->indices, &changed);
  return changed ? op->tensor(std::move(idx)) : e;
}
Expr IRMutator::visit_BufferLoad(const BufferLoadNode* op, const Expr& e) {
  bool changed = false;
  auto idx = mutate_all(op->indices, &changed);
  return changed ? buffer_load(op->buffer, std::move(idx)) : e;
}
Expr IRMutator::visit_Reduce(const ReduceNode* op, const Expr& e) {
  Expr s = mutate(op->source);
  return s.same_as(op->source) ? e : reduce(op->combiner, s, op->axes);
}

Stmt IRMutator::visit_For(const ForNode* op, const Stmt& s) {
  Expr mn = mutate(op->min), ext = mutate(op->extent);
  Stmt body = mutate(op->body);
  if (mn.same_as(op->min) && ext.same_as(op->extent) && body.same_as(op->body)) return s;
  return make_for(op->var, mn, ext, op->for_kind, body);
}
Stmt IRMutator::visit_BufferStore(const BufferStoreNode* op, const Stmt& s) {
  Expr v = mutate(op->value);
  bool changed = !v.same_as(op->value);
  auto idx = mutate_all(op->indices, &changed);
  return changed ? buffer_store(op->buffer, v, std::move(idx)) : s;
}
Stmt IRMutator::visit_Allocate(const AllocateNode* op, const Stmt& s) {
  Stmt body = mutate(op->body);
  return body.same_as(op->body) ? s : allocate(op->buffer, body);
}
Stmt IRMutator::visit_IfThenElse(const IfThenElseNode* op, const Stmt& s) {
  Expr c = mutate(op->cond);
  Stmt t = mutate(op->then_case);
  Stmt f = op->else_case ? mutate(op->else_case) : Stmt();
  if (c.same_as(op->cond) && t.same_as(op->then_case) && f.same_as(op->else_case)) return s;
  return if_then_else_stmt(c, t, f);
}
Stmt IRMutator::visit_SeqStmt(const SeqStmtNode* op, const Stmt& s) {
  bool changed = false;
  std::vector<Stmt> out;
  for (auto& x : op->seq) {
    out.push_back(mutate(x));
    if (!out.back().same_as(x)) changed = true;
  }
  return changed ? seq(std::move(out)) : s;
}
Stmt IRMutator::visit_Barrier(const BarrierNode*, const Stmt& s) { return s; }

// ---- helpers ---------------------------------------------------------------------------

namespace {

class LambdaVisitor : public IRVisitor {
 public:
  explicit LambdaVisitor(const std::function<void(const Expr&)>& f) : f_(f) {}
  void visit(const Expr& e) override {
    f_(e);
    IRVisitor::visit(e);
  }
  using IRVisitor::visit;

 private:
  const std::function<void(const Expr&)>& f_;
};

class Substituter : public IRMutator {
 public:
  explicit Substituter(const VarMap& m) : m_(m) {}

 protected:
  Expr visit_Var(const VarNode* op, const Expr& e) override {
    auto it = m_.find(op);
    return it == m_.end() ? e : it->second;
  }

 private:
  const VarMap& m_;
};

}  // namespace

void post_order_visit(const Expr& e, const std::function<void(const Expr&)>& f) {
  LambdaVisitor v(f);
  v.visit(e);
}

void visit_exprs(const Stmt& s, const std::function<void(const Expr&)>& f) {
  LambdaVisitor v(f);
  v.visit(s);
}

Expr substitute(const Expr& e, const VarMap& vmap) {
  if (vmap.empty()) return e;
  return Substituter(vmap).mutate(e);
}

Stmt substitute(const Stmt& s, const VarMap& vmap) {
  if (vmap.empty()) return s;
  return Substituter(vmap).mutate(s);
}

bool uses_var(const Expr& e, const VarNode* v) {
  bool found = false;
  post_order_visit(e, [&](const Expr& x) { found |= x.get() == v; });
  return found;
}

bool uses_var(const Stmt& s, const VarNode* v) {
  bool found = false;
  visit_exprs(s, [&](const Expr& x) { found |= x.get() == v; });
  return found;
}

bool has_unsafe_division(const Expr& e) {
  bool unsafe = false;
  post_order_visit(e, [&](const Expr& x) {
    const Expr* d = nullptr;
    if (auto* o = x.as<DivNode>()) d = &o->b;
    if (auto* o = x.as<FloorDivNode>()) d = &o->b;
    if (auto* o = x.as<FloorModNode>()) d = &o->b;
    if (!d || d->type().is_float()) return;
    auto* b = d->as<BroadcastNode>();
    auto* k = as_const_int(b ? b->value : *d);
    unsafe |= !k || *k == 0;
  });
  return unsafe;
}

FreeSymbols free_symbols(const Stmt& s) {
  class Collector : public IRVisitor {
   public:
    FreeSymbols out;
    std::set<const VarNode*> defined, seen_vars;
    std::set<const BufferNode*> allocated, seen_buffers;

    using IRVisitor::visit;
    void visit_Var(const VarNode* op, const Expr&) override {
      if (!defined.count(op) && seen_vars.insert(op).second) out.vars.push_back(op);
    }
    void visit_BufferLoad(const BufferLoadNode* op, const Expr& e) override {
      use(op->buffer.get());
      IRVisitor::visit_BufferLoad(op, e);
    }
    void visit_BufferStore(const BufferStoreNode* op, const Stmt& st) override {
      use(op->buffer.get());
      IRVisitor::visit_BufferStore(op, st);
    }
    void visit_For(const ForNode* op, const Stmt& st) override {
      defined.insert(op->var.get());
      IRVisitor::visit_For(op, st);
    }
    void visit_Allocate(const AllocateNode* op, const Stmt& st) override {
      allocated.insert(op->buffer.get());
      IRVisitor::visit_Allocate(op, st);
    }

   private:
    void use(const BufferNode* b) {
      if (!allocated.count(b) && seen_buffers.insert(b).second) out.buffers.push_back(b);
    }
  } c;
  c.visit(s);
  return std::move(c.out);
}

}  // namespace tuner::te
