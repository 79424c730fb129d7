#include "schedule/fallback.h"
#include "search/rules.h"

namespace tuner::search {

bool rule_rfactor(schedule::Schedule& s, const std::string& stage, const SpaceOptions& o) {
  te::Tensor op_ref = s.state().stage(stage).op;  // owned: primitives replace the state
  const auto& op = *op_ref;
  if (op.reduce_axes.empty()) return false;
  int64_t spatial = 1, reduction = 1;
  for (auto& a : op.axes) spatial *= a.extent;
  for (auto& a : op.reduce_axes) reduction *= a.extent;
  if (spatial >= 4 * o.num_cores) {
    // Enough rows for the cores: a long innermost reduction may still be vectorized across
    // its rows' elements (softmax, layer norm), the fallback's form.
    int width = schedule::row_reduction_vector_width(s.state(), stage, o.vector_lanes);
    if (!width) return false;
    if (s.categorical_value(s.sample_categorical({0, 1})) == 0) return false;
    schedule::vectorize_row_reduction(s, stage, width);
    return true;
  }
  // Otherwise only worth it when the reduction is long.
  if (reduction < 256) return false;
  // A whole long vector to one value: the fallback's partial sums (float32 accuracy) or the
  // sampled split below.
  if (op.axes.empty() && s.categorical_value(s.sample_categorical({0, 1})) == 1 &&
      schedule::split_full_reduction(s, stage, o.vector_lanes))
    return true;
  if (s.categorical_value(s.sample_categorical({0, 1})) == 0) return false;
  int last = int(op.axes.size() + op.reduce_axes.size()) - 1;
  int tile = s.sample_perfect_tile(stage, last, 2, 64);
  int64_t factor = s.decision(tile)[1];
  if (factor < 2) return false;
  std::string rf = s.rfactor(stage, last, factor);
  // rf has the spatial axes plus the factor axis: all parallel.
  const auto& rop = *s.state().stage(rf).op;
  std::vector<int> sp;
  for (int a = 0; a < int(rop.axes.size()); ++a) sp.push_back(a);
  int f = sp.size() > 1 ? s.fuse(rf, sp) : sp[0];
  s.parallel(rf, f);
  return true;
}

}  // namespace tuner::search
