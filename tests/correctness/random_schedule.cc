#include "random_schedule.h"

#include <algorithm>

namespace tuner::testing {

using namespace schedule;

namespace {

int64_t pick_factor(Rng& rng, int64_t extent) {
  static const int64_t kSmall[] = {2, 3, 4, 5, 7, 8, 16};
  if (rng.bernoulli(0.5)) {
    std::vector<int64_t> divs;
    for (int64_t d = 2; d <= extent && d <= 64; ++d)
      if (extent % d == 0) divs.push_back(d);
    if (!divs.empty()) return divs[rng.pick(divs.size())];
  }
  return kSmall[rng.pick(7)];
}

}  // namespace

Schedule random_schedule(const te::ComputeDAG& dag, uint64_t seed, int steps,
                         RandomScheduleStats* stats) {
  Schedule s(dag, seed);
  Rng& rng = s.rng();
  int unrolls = 0;
  for (int step = 0; step < steps; ++step) {
    std::vector<std::string> names;
    for (auto& st : s.state().stages())
      if (st.loc != Location::Inline) names.push_back(st.name());
    const Stage& st = s.state().stage(names[rng.pick(names.size())]);
    std::string name = st.name();
    const auto& leaves = st.leaves;
    int leaf = leaves[rng.pick(leaves.size())];
    int action = int(rng.weighted({3, 1.5, 1, 1, 1.5, 0.5, 1.5, 1, 0.3, 0.5, 0.3, 0.5, 0.3}));
    try {
      switch (action) {
        case 0: {  // split
          std::vector<int64_t> f{pick_factor(rng, st.iters[leaf].extent)};
          if (rng.bernoulli(0.3)) f.push_back(pick_factor(rng, f[0]));
          s.split(name, leaf, f);
          break;
        }
        case 1: {  // reorder
          std::vector<int> order = leaves;
          for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.pick(i)]);
          s.reorder(name, order);
          break;
        }
        case 2: {  // fuse a consecutive pair
          if (leaves.size() < 2) throw ScheduleError("one loop");
          size_t p = rng.pick(leaves.size() - 1);
          s.fuse(name, {leaves[p], leaves[p + 1]});
          break;
        }
        case 3: s.parallel(name, leaf); break;
        case 4: s.vectorize(name, rng.bernoulli(0.7) ? leaves.back() : leaf); break;
        case 5:  // explicit unroll of short loops only, to bound code size
          if (unrolls >= 2 || st.iters[leaf].extent > 16) throw ScheduleError("too long");
          s.unroll(name, leaf);
          ++unrolls;
          break;
        case 6: {  // compute_at a random loop of the consumer
          auto cons = s.state().consumers(name);
          if (cons.size() != 1) throw ScheduleError("no single consumer");
          const auto& cl = s.state().stage(cons[0]).leaves;
          s.compute_at(name, cons[0], cl[rng.pick(cl.size())]);
          break;
        }
        case 7: s.compute_inline(name); break;
        case 8: s.compute_root(name); break;
        case 9: s.cache_write(name); break;
        case 10: {
          int nax = int(st.op->axes.size()), nred = int(st.op->reduce_axes.size());
          if (nred == 0) throw ScheduleError("not a reduction");
          s.rfactor(name, nax + int(rng.pick(nred)), 2 + int64_t(rng.pick(4)));
          break;
        }
        case 11: s.auto_unroll(name, rng.bernoulli(0.5) ? 16 : 64); break;
        case 12: {
          auto& ins = dag.inputs();
          auto& t = ins[rng.pick(ins.size())];
          std::vector<std::string> readers;
          for (auto& x : s.state().stages()) {
            if (x.loc == Location::Inline) continue;
            for (auto& in : x.op->inputs())
              if (in->name == t->name) readers.push_back(x.name());
          }
          s.cache_read(t->name, readers);
          break;
        }
      }
      if (stats) ++stats->applied;
    } catch (const ScheduleError&) {
      if (stats) ++stats->rejected;
    }
  }
  return s;
}

}  // namespace tuner::testing
