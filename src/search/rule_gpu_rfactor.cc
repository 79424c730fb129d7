#include "search/rules.h"

namespace tuner::search {

std::string rule_gpu_rfactor(schedule::Schedule& s, const std::string& stage, const SpaceOptions& o) {
  te::Tensor op_ref = s.state().stage(stage).op;  // owned: primitives replace the state
  const auto& op = *op_ref;
  int64_t spatial = 1, reduction = 1;
  for (auto& a : op.axes) spatial *= a.extent;
  for (auto& a : op.reduce_axes) reduction *= a.extent;
  // Worth it when the outputs alone cannot give a GPU enough threads.
  if (op.reduce_axes.empty() || spatial >= 1024 || reduction < 64) return "";
  if (s.categorical_value(s.sample_categorical({0, 1})) == 0) return "";
  int last = int(op.axes.size() + op.reduce_axes.size()) - 1;
  int tile = s.sample_perfect_tile(stage, last, 2, 256);
  int64_t factor = s.decision(tile)[1];
  if (factor < 2) return "";
  try {
    return s.rfactor(stage, last, factor);
  } catch (const schedule::ScheduleError&) {
    return "";
  }
}

}  // namespace tuner::search
