#include "schedule/gpu_fallback.h"

#include <algorithm>

namespace tuner::schedule {

namespace {

// Fewer outputs than this leave most of a GPU idle: their long reductions are split.
constexpr int64_t kGpuFewOutputs = 1024;
constexpr int64_t kGpuMinSplitReduction = 2048;
constexpr int64_t kGpuMaxPartials = 4096;

// A reduction with few outputs over a long last axis sums partial results in parallel first
// (rfactor: partial f takes elements f, f + P, ..., so adjacent threads read adjacent
// elements), then each output its P partials: one thread summed a 4M-element vector before.
void split_long_reduction(Schedule& s, const std::string& name) {
  const Stage& st = s.state().stage(name);
  if (st.loc != Location::Root || st.op->reduce_axes.empty()) return;
  int64_t outputs = 1;
  for (auto& a : st.op->axes) outputs *= a.extent;
  int64_t e = st.op->reduce_axes.back().extent;
  if (outputs >= kGpuFewOutputs || e < kGpuMinSplitReduction) return;
  int last = int(st.op->axes.size() + st.op->reduce_axes.size()) - 1;
  // Whole warps of partials, each summing at least 8 elements.
  int64_t partials = std::min(kGpuMaxPartials, e / 8) / 32 * 32;
  try {
    s.rfactor(name, last, partials);
  } catch (const ScheduleError&) {  // a stage rfactor cannot split stays whole
  }
}

}  // namespace

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
  for (auto& st : std::vector<Stage>(s.state().stages())) split_long_reduction(s, st.name());
  for (auto& st : std::vector<Stage>(s.state().stages()))
    if (st.loc == Location::Root) auto_bind(s, st.name(), threads);
  return s;
}

}  // namespace tuner::schedule
