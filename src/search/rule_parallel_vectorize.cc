#include "schedule/fallback.h"
#include "search/rules.h"

namespace tuner::search {

void rule_parallel_vectorize(schedule::Schedule& s, const std::string& stage, const SpaceOptions& o) {
  te::Tensor op = s.state().stage(stage).op;  // not a Stage&: primitives replace the state
  int nax = int(op->axes.size());
  if (nax == 0) return;
  std::vector<int> outer;
  for (int a = 0; a + 1 < nax; ++a) outer.push_back(a);
  int vec = -1;
  if (schedule::fallback_serial_row(*op, o.vector_lanes)) {
    // The row stays serial, as in the fallback (its vectors would be too short to sample).
  } else if (op->reduce_axes.empty()) {
    // Innermost axis: a vector-sized inner part, the rest joins the parallel loops. A row no
    // vector divides is tiled over its extent rounded up to whole vectors (a shorter last
    // block), as the fallback's.
    int64_t ext = op->axes.back().extent, v = schedule::injective_vector_width(*op, o.vector_lanes);
    int64_t padded = ext % v != 0 ? (ext + v - 1) / v * v : 0;
    if (o.like_fallback) s.preset_next({(padded ? padded : ext) / v, v});
    int t = s.sample_perfect_tile(stage, nax - 1, 2, 2 * o.vector_lanes, padded);
    auto sp = s.split_sampled(stage, nax - 1, t);
    outer.push_back(sp[0]);
    vec = sp[1];
  } else {
    outer.push_back(nax - 1);
  }
  int f = outer.size() > 1 ? s.fuse(stage, outer) : outer[0];
  if (s.state().stage(stage).iters[f].extent > 1) s.parallel(stage, f);
  if (vec >= 0) s.vectorize(stage, vec);
}

}  // namespace tuner::search
