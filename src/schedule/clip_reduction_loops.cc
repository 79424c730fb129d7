// Clipped reduction loops. A conv whose padding is inlined adds `if_then_else(border tests,
// in[...], 0) * w` per tap. On the rows version_guarded_reductions leaves guarded, the taps
// whose input row lies in the padding add zeros: a dilated conv's rows are mostly such rows
// (3x3 dilated 12 on a 28x28 map: 24 of 28). When, for every store of a serial loop's body,
// a test linear in the loop's variable that fails makes the added value zero, the loop only
// runs where the loosest of those tests can hold.
#include <algorithm>

#include "schedule/passes.h"
#include "te/bounds.h"
#include "te/functor.h"
#include "te/simplify.h"

namespace tuner::schedule {

using namespace te;

namespace {

// Appends tests of which any that fails makes `e` zero (a product with an operand guarded
// to zero; both operands of a sum guarded alike).
void zero_unless(const Expr& e, std::vector<Expr>& out) {
  if (auto* c = e.as<CallNode>(); c && c->op == Intrinsic::IfThenElse && is_const(c->args[2], 0)) {
    conjuncts(c->args[0], out);
    zero_unless(c->args[1], out);
  } else if (auto* b = e.as<BroadcastNode>()) {
    zero_unless(b->value, out);
  } else if (auto* m = e.as<MulNode>()) {
    zero_unless(m->a, out);
    zero_unless(m->b, out);
  } else if (auto* cast = e.as<CastNode>()) {
    zero_unless(cast->value, out);
  } else if (auto* a = e.as<AddNode>()) {
    std::vector<Expr> left, right;
    zero_unless(a->a, left);
    zero_unless(a->b, right);
    for (const Expr& t : left)
      if (contains_equal(right, t)) out.push_back(t);
  }
}

// The stores of a body of loops and stores only, and the variables of its loops; false for
// any other statement (a branch or an allocation: the loop would skip more than stores).
bool stores_of(const Stmt& s, std::vector<const BufferStoreNode*>& stores,
               std::vector<const VarNode*>& loop_vars) {
  if (auto* st = s.as<BufferStoreNode>()) {
    stores.push_back(st);
    return true;
  }
  if (auto* f = s.as<ForNode>()) {
    loop_vars.push_back(f->var.get());
    return stores_of(f->body, stores, loop_vars);
  }
  if (auto* seq = s.as<SeqStmtNode>()) {
    for (const Stmt& x : seq->seq)
      if (!stores_of(x, stores, loop_vars)) return false;
    return true;
  }
  return false;
}

// What a store `buf[i] = buf[i] + x` adds (x), or null for any other store.
Expr addend(const BufferStoreNode* st) {
  auto* add = st->value.as<AddNode>();
  if (!add) return Expr();
  auto reads_target = [&](const Expr& e) {
    auto* load = e.as<BufferLoadNode>();
    if (!load || load->buffer.get() != st->buffer.get() || load->indices.size() != st->indices.size())
      return false;
    for (size_t i = 0; i < st->indices.size(); ++i)
      if (!deep_equal(load->indices[i], st->indices[i])) return false;
    return true;
  };
  if (reads_target(add->a)) return add->b;
  if (reads_target(add->b)) return add->a;
  return Expr();
}

bool same_terms(const LinearForm& a, const LinearForm& b) {
  if (a.terms.size() != b.terms.size()) return false;
  for (const auto& [atom, k] : a.terms) {
    auto same = [&](const auto& t) { return t.second == k && deep_equal(t.first, atom); };
    if (std::none_of(b.terms.begin(), b.terms.end(), same)) return false;
  }
  return true;
}

// Replaces the tests in `known` (each an equal expression) by true.
class KnownTestRemover : public IRMutator {
 public:
  explicit KnownTestRemover(const std::vector<Expr>& known) : known_(known) {}
  using IRMutator::mutate;
  Expr mutate(const Expr& e) override {
    if (e && e.type() == DataType::boolean() && contains_equal(known_, e)) return make_int(1, DataType::boolean());
    return IRMutator::mutate(e);
  }

 private:
  const std::vector<Expr>& known_;
};

class ReductionLoopClipper : public IRMutator {
 protected:
  Stmt visit_For(const ForNode* op, const Stmt& s) override {
    Stmt r = IRMutator::visit_For(op, s);
    auto* f = r.as<ForNode>();
    if (!f || f->for_kind != ForKind::Serial) return r;
    std::vector<const BufferStoreNode*> stores;
    std::vector<const VarNode*> inner;
    if (!stores_of(f->body, stores, inner) || stores.empty()) return r;
    const VarNode* v = f->var.get();
    // Tests `terms + c >= 0` on v and the variables around the loop that zero each store's
    // addend; across the stores, those of equal terms with the loosest constant (the
    // unrolled columns of a tile test one column each).
    std::vector<NonNegativeTest> loosest;
    std::vector<std::pair<Expr, NonNegativeTest>> all_tests;  // every store's, with its expression
    for (size_t i = 0; i < stores.size(); ++i) {
      Expr x = addend(stores[i]);
      if (!x) return r;
      std::vector<Expr> tests;
      zero_unless(x, tests);
      std::vector<NonNegativeTest> forms;
      for (const Expr& t : tests) {
        bool local = std::any_of(inner.begin(), inner.end(), [&](const VarNode* w) { return uses_var(t, w); });
        std::optional<NonNegativeTest> n = nonnegative_form(t);
        if (n && !local && uses_var(t, v)) {
          all_tests.emplace_back(t, *n);
          forms.push_back(std::move(*n));
        }
      }
      if (i == 0) {
        loosest = std::move(forms);
        continue;
      }
      std::erase_if(loosest, [&](NonNegativeTest& l) {
        bool kept = false;
        for (const NonNegativeTest& n : forms)
          if (n.type == l.type && same_terms(n.form, l.form)) {
            l.form.constant = std::max(l.form.constant, n.form.constant);
            kept = true;
          }
        return !kept;
      });
    }
    Expr lo = f->min, hi = f->min + f->extent;
    std::vector<const NonNegativeTest*> bounding;
    for (const NonNegativeTest& t : loosest) {
      std::optional<VarBound> b = linear_bound(t.form.to_expr(t.type) >= make_int(0, t.type), v);
      if (!b) continue;  // v inside a division or product
      if (b->lower) lo = max(lo, b->bound);
      else hi = min(hi, b->bound);
      bounding.push_back(&t);
    }
    if (bounding.empty()) return r;
    // The bounds are exact (linear_bound), so inside the clipped loop a test no stricter than
    // a bounding one always holds: it goes (a 7x1 conv's row test, once per tap and pixel).
    std::vector<Expr> known;
    for (const auto& [e, n] : all_tests)
      for (const NonNegativeTest* b : bounding)
        if (n.type == b->type && same_terms(n.form, b->form) && n.form.constant >= b->form.constant) known.push_back(e);
    Stmt body = known.empty() ? f->body : simplify(KnownTestRemover(known).mutate(f->body));
    lo = simplify(lo);
    return make_for(f->var, lo, simplify(max(hi - lo, make_int(0, lo.type()))), ForKind::Serial, body);
  }
};

}  // namespace

Stmt clip_guarded_reduction_loops(const Stmt& s) { return s ? ReductionLoopClipper().mutate(s) : s; }

}  // namespace tuner::schedule
