// Feature extraction (version 2), in the spirit of Ansor and TenSet: one fixed-length vector
// per buffer store of the loop IR, describing the computation it performs (operation counts
// times its trip count), the loops around it (vectorize / unroll / parallel lengths and
// positions), the memory it touches (up to five buffers: bytes, footprint, cache lines,
// reuse, stride, and what one iteration of the reuse loop touches) and how much of the nest
// fits a cache. Counts are log2(1 + x) so that the model sees ratios.
#include "costmodel/features.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "schedule/lower.h"
#include "te/bounds.h"
#include "te/functor.h"

namespace tuner::costmodel {

using namespace te;

namespace {

double slog(double x) { return std::log2(1.0 + std::max(0.0, x)); }

struct Loop {
  const VarNode* var;
  int64_t extent;
  ForKind kind;
};

// Operation counts of one expression (vector operations count once per lane).
struct OpCounts {
  double f_addsub = 0, f_mul = 0, f_div = 0, f_cmp = 0, f_math = 0, i_arith = 0, b_ops = 0,
         select = 0, cast = 0;
};

void count_ops(const Expr& e, OpCounts& c) {
  post_order_visit(e, [&](const Expr& x) {
    double lanes = x.type().lanes;
    bool f = x.type().is_float();
    switch (x.kind()) {
      case NodeKind::Add: case NodeKind::Sub: (f ? c.f_addsub : c.i_arith) += lanes; break;
      case NodeKind::Mul: (f ? c.f_mul : c.i_arith) += lanes; break;
      case NodeKind::Div: c.f_div += lanes; break;
      case NodeKind::FloorDiv: case NodeKind::FloorMod: c.i_arith += lanes; break;
      case NodeKind::Min: case NodeKind::Max: (f ? c.f_cmp : c.i_arith) += lanes; break;
      case NodeKind::EQ: case NodeKind::NE: case NodeKind::LT: case NodeKind::LE:
      case NodeKind::GT: case NodeKind::GE: c.f_cmp += lanes; break;
      case NodeKind::And: case NodeKind::Or: case NodeKind::Not: c.b_ops += lanes; break;
      case NodeKind::Select: c.select += lanes; break;
      case NodeKind::Cast: c.cast += lanes; break;
      case NodeKind::Call:
        if (x.as<CallNode>()->op == Intrinsic::IfThenElse) c.select += lanes;
        else c.f_math += lanes;
        break;
      default: break;
    }
  });
}

struct Access {
  const BufferNode* buf;
  bool read = false, write = false;
  Expr index;  // one representative flat index
  int count = 0;
  std::vector<bool> moves;  // per loop, outermost first: whether its variable moves the index
};

class Extractor : public IRVisitor {
 public:
  std::vector<std::vector<float>> rows;
  using IRVisitor::visit;

 protected:
  void visit_For(const ForNode* op, const Stmt& s) override {
    const int64_t* ext = as_const_int(op->extent);
    IntBound eb = const_int_bound(op->extent, ranges_);
    int64_t e = ext ? *ext : (eb.bounded() ? eb.hi : 1);
    loops_.push_back({op->var.get(), std::max<int64_t>(e, 1), op->for_kind});
    ranges_[op->var.get()] = {0, std::max<int64_t>(e, 1) - 1};
    visit(op->body);
    ranges_.erase(op->var.get());
    loops_.pop_back();
  }
  void visit_Allocate(const AllocateNode* op, const Stmt& s) override {
    alloc_bytes_ += double(op->buffer->num_elements() * op->buffer->dtype.bytes());
    visit(op->body);
  }
  void visit_BufferStore(const BufferStoreNode* op, const Stmt&) override {
    rows.push_back(store_features(op));
  }

 private:
  std::vector<float> store_features(const BufferStoreNode* st) {
    std::vector<float> f;
    f.reserve(kFeaturesPerStore);
    double trips = 1;
    for (auto& l : loops_) trips *= double(l.extent);
    // Group A: computation.
    OpCounts c;
    count_ops(st->value, c);
    for (double x : {c.f_addsub, c.f_mul, c.f_div, c.f_cmp, c.f_math, c.i_arith, c.b_ops, c.select, c.cast})
      f.push_back(float(slog(x * trips)));
    // Group B: loops.
    auto annotated = [&](ForKind k, double* len, double* prod, double* pos, double* num) {
      *len = 0, *prod = 1, *pos = 0, *num = 0;
      for (int i = int(loops_.size()) - 1; i >= 0; --i)
        if (loops_[i].kind == k) {
          if (*num == 0) {
            *len = double(loops_[i].extent);
            *pos = double(loops_.size() - i);  // 1 = innermost
          }
          *prod *= double(loops_[i].extent);
          *num += 1;
        }
      if (*num == 0) *prod = 0;
    };
    double len, prod, pos, num;
    for (ForKind k : {ForKind::Vectorized, ForKind::Unrolled, ForKind::Parallel}) {
      annotated(k, &len, &prod, &pos, &num);
      f.push_back(float(slog(len)));
      f.push_back(float(slog(prod)));
      f.push_back(float(pos));
      f.push_back(float(num));
    }
    f.push_back(float(slog(trips)));
    f.push_back(float(loops_.size()));
    bool update = false;
    post_order_visit(st->value, [&](const Expr& e) {
      if (auto* l = e.as<BufferLoadNode>()) update |= l->buffer.get() == st->buffer.get();
    });
    f.push_back(update ? 1.f : 0.f);
    // Group C: up to five buffers, most bytes first.
    std::vector<Access> acc;
    auto note = [&](const BufferNode* b, const Expr& idx, bool write) {
      for (auto& a : acc)
        if (a.buf == b) {
          (write ? a.write : a.read) = true;
          ++a.count;
          return;
        }
      Access a;
      a.buf = b;
      (write ? a.write : a.read) = true;
      a.index = idx;
      a.count = 1;
      acc.push_back(a);
    };
    note(st->buffer.get(), st->indices[0], true);
    post_order_visit(st->value, [&](const Expr& e) {
      if (auto* l = e.as<BufferLoadNode>()) note(l->buffer.get(), l->indices[0], false);
    });
    for (auto& a : acc)
      for (auto& l : loops_) a.moves.push_back(uses_var(a.index, l.var));
    std::vector<std::pair<double, std::vector<float>>> bufs;
    for (auto& a : acc) bufs.push_back(buffer_features(a, acc, trips));
    std::stable_sort(bufs.begin(), bufs.end(), [](auto& x, auto& y) { return x.first > y.first; });
    for (int k = 0; k < kBuffersPerStore; ++k) {
      if (k < int(bufs.size())) f.insert(f.end(), bufs[k].second.begin(), bufs[k].second.end());
      else f.insert(f.end(), kFeaturesPerBuffer, 0.f);
    }
    // Group D: memory allocated around the store, and the outer loops' parallelism.
    f.push_back(float(slog(alloc_bytes_)));
    double outer = 1;
    for (auto& l : loops_) {
      if (l.kind != ForKind::Parallel && l.kind != ForKind::Serial) break;
      outer *= double(l.extent);
    }
    f.push_back(float(slog(outer)));
    // Group E: iterations whose data fits an L1- and an L2-sized cache (the working set of all
    // buffers of the store under a loop, growing outward from the innermost loop).
    double fits[2] = {1, 1};
    const double caches[2] = {32.0 * 1024, 1024.0 * 1024};
    RangeMap r = ranges_below(int(loops_.size()) - 1);
    for (int d = int(loops_.size()) - 1; d >= 0; --d) {
      r[loops_[d].var] = ranges_.at(loops_[d].var);
      double bytes = working_set(acc, r);
      if (bytes > caches[1]) break;
      for (int c = 0; c < 2; ++c)
        if (bytes <= caches[c]) fits[c] *= double(loops_[d].extent);
    }
    for (double x : fits) f.push_back(float(slog(x)));
    return f;
  }

  // The loop ranges with the loops at depth <= `fixed` held at one point (-1: none held).
  RangeMap ranges_below(int fixed) const {
    RangeMap r = ranges_;
    for (int i = 0; i <= fixed; ++i) r[loops_[i].var] = {0, 0};
    return r;
  }
  // Bytes an access touches over `ranges`: its index's interval, but no more elements than
  // the loops moving it take steps (a 16x16 tile of a 512-wide matrix spans 7,700 elements
  // and touches 256).
  double footprint(const Access& a, const RangeMap& ranges) const {
    IntBound b = const_int_bound(a.index, ranges);
    double n = b.bounded() ? double(b.hi - b.lo + 1) : double(a.buf->num_elements());
    double steps = double(a.index.type().lanes);
    for (size_t i = 0; i < loops_.size(); ++i) {
      const IntBound& r = ranges.at(loops_[i].var);
      if (r.hi > r.lo && a.moves[i]) steps *= double(r.hi - r.lo + 1);
    }
    return std::min({n, steps, double(a.buf->num_elements())}) * double(a.buf->dtype.bytes());
  }
  // Bytes all the store's accesses touch over `ranges`.
  double working_set(const std::vector<Access>& acc, const RangeMap& ranges) const {
    double bytes = 0;
    for (auto& a : acc) bytes += footprint(a, ranges);
    return bytes;
  }

  std::pair<double, std::vector<float>> buffer_features(const Access& a, const std::vector<Access>& acc,
                                                        double trips) {
    double elem = double(a.buf->dtype.bytes());
    int lanes = a.index.type().lanes;
    Expr idx = a.index;
    int64_t ramp_stride = 0;
    if (auto* r = idx.as<RampNode>()) {
      if (auto* s = as_const_int(r->stride)) ramp_stride = *s;
      idx = r->base;
    }
    // Coefficient of each loop variable in the index (linear part).
    std::map<const VarNode*, int64_t> coef;
    if (idx.type().is_integer() && idx.type().is_scalar()) {
      LinearForm lf = to_linear(idx);
      for (auto& [atom, c] : lf.terms)
        if (auto* v = atom.as<VarNode>()) coef[v] += c;
    }
    double bytes = trips * elem * lanes;
    IntBound b = const_int_bound(a.index, ranges_);
    double footprint = b.bounded() ? double(b.hi - b.lo + 1) : double(a.buf->num_elements());
    footprint = std::min(footprint, double(a.buf->num_elements())) * elem;
    // Stride of the innermost loop that moves this access.
    double stride = 0;
    for (int i = int(loops_.size()) - 1; i >= 0; --i)
      if (a.moves[size_t(i)]) {
        auto it = coef.find(loops_[i].var);
        stride = it == coef.end() ? 0 : double(std::abs(it->second));
        break;
      }
    if (lanes > 1) stride = double(std::abs(ramp_stride));
    // Cache lines of a footprint: one per element when the stride skips lines.
    auto lines_of = [&](double bytes_touched) {
      return stride * elem >= 64 || stride == 0 ? bytes_touched / elem : bytes_touched / 64.0;
    };
    double lines = lines_of(footprint);
    // Reuse: loops whose variable the index does not use revisit the same elements.
    double reuse_count = 1, reuse_dist = 1;
    int reuse_type = 0, reuse_loop = -1;
    bool inner = true;
    for (int i = int(loops_.size()) - 1; i >= 0; --i) {
      if (!a.moves[size_t(i)]) {
        reuse_count *= double(loops_[i].extent);
        reuse_type = inner ? 1 : 2;  // 1: innermost loops reuse (registers), 2: outer
        if (reuse_loop < 0) reuse_loop = i;
      } else if (reuse_type == 0) {
        reuse_dist *= double(loops_[i].extent);
        inner = false;
      }
    }
    std::vector<float> f{float(a.read && a.write ? 3 : a.write ? 2 : 1), float(slog(bytes)),
                         float(slog(footprint)),   float(slog(lines)),
                         float(reuse_type),        float(slog(reuse_dist)),
                         float(slog(reuse_count)), float(slog(stride)),
                         float(stride == 1 || ramp_stride == 1 ? 1 : 0),
                         float(slog(bytes / std::max(1.0, footprint)))};
    // Within one iteration of the reuse loop: this buffer's unique bytes and lines, and the
    // bytes of all the store's buffers that pass between two uses (the reuse distance a
    // cache must hold). Without reuse: the whole nest.
    RangeMap inner_ranges = ranges_below(reuse_loop);
    double unique = reuse_loop < 0 ? footprint : Extractor::footprint(a, inner_ranges);
    double dist_bytes = reuse_loop < 0 ? 0 : working_set(acc, inner_ranges);
    f.insert(f.end(), {float(slog(unique)), float(slog(lines_of(unique))), float(slog(dist_bytes))});
    return {bytes, f};
  }

  std::vector<Loop> loops_;
  RangeMap ranges_;
  double alloc_bytes_ = 0;
};

}  // namespace

std::vector<std::vector<float>> extract_store_features(const schedule::State& state) {
  auto f = schedule::lower_for_features(state);
  Extractor ex;
  if (f.body) ex.visit(f.body);
  return std::move(ex.rows);
}

}  // namespace tuner::costmodel
