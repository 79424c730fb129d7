// Traversals over the IR: a typed-return functor for analyses, a recursive visitor, and a
// copy-on-write mutator (returns the same node when nothing changed, so `same_as` tells
// whether a pass did anything).
#pragma once

#include <functional>
#include <unordered_map>
#include <vector>

#include "support/error.h"
#include "te/expr.h"
#include "te/tensor.h"

namespace tuner::te {

template <class F>
class ExprFunctor;

/// Dispatches on an Expr's kind to `visit_<Kind>`; unhandled kinds go to `visit_default`.
template <class R, class... Args>
class ExprFunctor<R(const Expr&, Args...)> {
 public:
  virtual ~ExprFunctor() = default;
  R operator()(const Expr& e, Args... args) { return dispatch(e, args...); }
  R dispatch(const Expr& e, Args... args) {
    switch (e.kind()) {
#define TUNER_EXPR(T) \
  case NodeKind::T: return visit_##T(static_cast<const T##Node*>(e.get()), e, args...);
#include "te/IRNodes.def"
      default: break;
    }
    INTERNAL_CHECK(false) << "not an expression: " << kind_name(e.kind());
  }

 protected:
  virtual R visit_default(const Expr& e, Args...) {
    INTERNAL_CHECK(false) << "unhandled node " << kind_name(e.kind());
  }
#define TUNER_EXPR(T)                                             \
  virtual R visit_##T(const T##Node*, const Expr& e, Args... args) { \
    return visit_default(e, args...);                            \
  }
#include "te/IRNodes.def"
};

/// Visits every node of an Expr or Stmt tree, children before nothing (pre-order recursion).
class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  virtual void visit(const Expr& e);
  virtual void visit(const Stmt& s);

 protected:
#define TUNER_EXPR(T) virtual void visit_##T(const T##Node* op, const Expr& e);
#define TUNER_STMT(T) virtual void visit_##T(const T##Node* op, const Stmt& s);
#include "te/IRNodes.def"
};

/// Rebuilds an IR tree bottom-up; a node whose children are unchanged is returned as is.
class IRMutator {
 public:
  virtual ~IRMutator() = default;
  virtual Expr mutate(const Expr& e);
  virtual Stmt mutate(const Stmt& s);

 protected:
#define TUNER_EXPR(T) virtual Expr visit_##T(const T##Node* op, const Expr& e);
#define TUNER_STMT(T) virtual Stmt visit_##T(const T##Node* op, const Stmt& s);
#include "te/IRNodes.def"
  std::vector<Expr> mutate_all(const std::vector<Expr>& v, bool* changed);
};

/// Calls f on every Expr node of e, parents before children.
void post_order_visit(const Expr& e, const std::function<void(const Expr&)>& f);
/// Calls f on every Expr node of a statement tree.
void visit_exprs(const Stmt& s, const std::function<void(const Expr&)>& f);

using VarMap = std::unordered_map<const VarNode*, Expr>;
/// Replaces variables by expressions.
Expr substitute(const Expr& e, const VarMap& vmap);
Stmt substitute(const Stmt& s, const VarMap& vmap);
/// True when e mentions variable v.
bool uses_var(const Expr& e, const VarNode* v);
bool uses_var(const Stmt& s, const VarNode* v);
/// True when `e` holds an integer division or modulo whose divisor is not a nonzero
/// constant (or a broadcast of one): evaluated where its guard is off, it could trap.
bool has_unsafe_division(const Expr& e);

/// The variables and buffers a statement uses but does not define (loop variables and
/// allocations inside it), each once, in order of first use.
struct FreeSymbols {
  std::vector<const VarNode*> vars;
  std::vector<const BufferNode*> buffers;
};
FreeSymbols free_symbols(const Stmt& s);

}  // namespace tuner::te
