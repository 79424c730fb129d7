#include "schedule/passes.h"
#include "te/functor.h"

namespace tuner::schedule {

using namespace te;

namespace {

Expr flat_index(const Buffer& b, const std::vector<Expr>& idx) {
  if (idx.size() == 1) return idx[0];
  Expr flat;
  for (size_t k = 0; k < idx.size(); ++k) {
    size_t d = b->dim_order.empty() ? k : size_t(b->dim_order[k]);
    flat = k == 0 ? idx[d] : flat * make_int(b->shape[d]) + idx[d];
  }
  return flat;
}

class Flattener : public IRMutator {
 protected:
  Expr visit_BufferLoad(const BufferLoadNode* op, const Expr& e) override {
    Expr r = IRMutator::visit_BufferLoad(op, e);
    auto* l = r.as<BufferLoadNode>();
    if (l->indices.size() == 1) return r;
    return buffer_load(l->buffer, {flat_index(l->buffer, l->indices)});
  }
  Stmt visit_BufferStore(const BufferStoreNode* op, const Stmt& s) override {
    Stmt r = IRMutator::visit_BufferStore(op, s);
    auto* st = r.as<BufferStoreNode>();
    if (st->indices.size() == 1) return r;
    return buffer_store(st->buffer, st->value, {flat_index(st->buffer, st->indices)});
  }
};

}  // namespace

Stmt flatten_storage(const Stmt& s) { return s ? Flattener().mutate(s) : s; }

}  // namespace tuner::schedule
