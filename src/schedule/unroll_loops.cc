#include "schedule/passes.h"
#include "te/functor.h"

namespace tuner::schedule {

using namespace te;

namespace {

class Unroller : public IRMutator {
 public:
  explicit Unroller(int64_t max_extent) : max_extent_(max_extent) {}

 protected:
  Stmt visit_For(const ForNode* op, const Stmt& s) override {
    Stmt r = IRMutator::visit_For(op, s);
    auto* f = r.as<ForNode>();
    if (!f || f->for_kind != ForKind::Unrolled) return r;
    auto* ext = as_const_int(f->extent);
    if (!ext || *ext > max_extent_) return make_for(f->var, f->min, f->extent, ForKind::Serial, f->body);
    std::vector<Stmt> copies;
    for (int64_t i = 0; i < *ext; ++i)
      copies.push_back(substitute(f->body, {{f->var.get(), f->min + make_int(i)}}));
    return seq(copies);
  }

 private:
  int64_t max_extent_;
};

}  // namespace

Stmt unroll_loops(const Stmt& s, int64_t max_extent) {
  return s ? Unroller(max_extent).mutate(s) : s;
}

}  // namespace tuner::schedule
