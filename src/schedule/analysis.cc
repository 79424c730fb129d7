#include "schedule/analysis.h"

namespace tuner::schedule {

bool is_tiled_reduction(const Stage& s) {
  const auto& op = *s.op;
  if (op.tag == "matmul") return op.axes.size() >= 2 && op.reduce_axes.size() == 1;
  if (op.tag == "conv2d")
    return op.axes.size() == 4 && (op.reduce_axes.size() == 3 || op.reduce_axes.size() == 2);
  return false;
}

bool should_auto_inline(const State& st, const std::string& stage) {
  if (!st.can_inline(stage) || st.stage(stage).op->tag == "pad") return false;
  for (auto& c : st.consumers(stage))
    if (is_tiled_reduction(st.stage(c))) return false;
  return true;
}

std::string epilogue_of(const State& st, const std::string& stage) {
  const Stage& s = st.stage(stage);
  if (s.is_output()) return "";
  auto cons = st.consumers(stage);
  if (cons.size() != 1) return "";
  const Stage& c = st.stage(cons[0]);
  if (!c.op->reduce_axes.empty() || c.loc != Location::Root || c.op->shape != s.op->shape) return "";
  return cons[0];
}

std::set<std::string> tiled_epilogues(const State& st) {
  std::set<std::string> out;
  for (auto& s : st.stages())
    if (is_tiled_reduction(s)) {
      std::string epi = epilogue_of(st, s.name());
      if (!epi.empty()) out.insert(epi);
    }
  return out;
}

}  // namespace tuner::schedule
