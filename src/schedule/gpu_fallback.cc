#include "schedule/gpu_fallback.h"

namespace tuner::schedule {

bool auto_bind(Schedule& s, const std::string& name, int64_t threads) {
  const Stage& st = s.state().stage(name);
  if (st.loc != Location::Root) return false;
  std::vector<int> prefix;
  for (int id : st.leaves) {
    const Iter& it = st.iters[id];
    if (is_binding(it.ann)) return false;
    if (it.kind != IterKind::Spatial || it.ann != Annotation::None) break;
    prefix.push_back(id);
  }
  // Loops that other stages are computed at cannot be fused: bind the run before them.
  while (!prefix.empty()) {
    try {
      int f = prefix.size() > 1 ? s.fuse(name, prefix) : prefix[0];
      int64_t ext = s.state().stage(name).iters[f].extent;
      auto parts = s.split(name, f, {std::min(threads, ext)});
      s.bind(name, parts[0], "blockIdx.x");
      s.bind(name, parts[1], "threadIdx.x");
      return true;
    } catch (const ScheduleError&) {
      prefix.pop_back();
    }
  }
  return false;
}

Schedule gpu_fallback_schedule(const te::ComputeDAG& dag, int64_t threads) {
  Schedule s(dag);
  for (auto& st : std::vector<Stage>(s.state().stages()))
    if (s.state().can_inline(st.name())) s.compute_inline(st.name());
  for (auto& st : std::vector<Stage>(s.state().stages()))
    if (st.loc == Location::Root) auto_bind(s, st.name(), threads);
  return s;
}

}  // namespace tuner::schedule
