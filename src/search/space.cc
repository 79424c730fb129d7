#include "search/space.h"

#include <set>

#include "schedule/analysis.h"
#include "schedule/fallback.h"
#include "search/rules.h"
#include "search/space_gpu.h"

namespace tuner::search {

using namespace schedule;

Schedule generate_schedule(const te::ComputeDAG& dag, const SpaceOptions& o, uint64_t seed,
                           const Decisions* presets) {
  if (o.gpu) return generate_gpu_schedule(dag, o, seed, presets);
  Schedule s(dag, seed);
  if (presets) s.preset_decisions(*presets);
  rule_auto_inline(s);
  // Consumers before producers: a producer's compute location may name its consumer's loops.
  std::vector<std::string> names;
  for (auto& st : s.state().stages()) names.push_back(st.name());
  // The epilogue of a tiled reduction is scheduled together with it.
  auto tiled = [&](const Stage& st) { return tiled_on_cpu(s.state(), st, o.vector_lanes); };
  std::set<std::string> handled = tiled_epilogues(s.state(), tiled);
  for (auto it = names.rbegin(); it != names.rend(); ++it) {
    const std::string& name = *it;
    if (handled.count(name) || !s.state().has_stage(name)) continue;
    const Stage& st = s.state().stage(name);
    if (st.loc != Location::Root) continue;
    if (auto w = winograd_conv_stages(s.state(), name)) {
      for (auto& done : rule_winograd(s, *w, o)) handled.insert(done);
      continue;
    }
    if (tiled(st)) {
      rule_multi_level_tiling(s, name, o);
      handled.insert({name, name + ".local"});
      continue;
    }
    handled.insert(name);
    if (!st.is_output() && s.state().consumers(name).size() == 1) {
      if (o.like_fallback) s.preset_next({fallback_padding_location(s.state(), name, o.vector_registers)});
      if (rule_compute_location(s, name) != Location::Root) {
        fill_parities_together(s, name);
        continue;
      }
    }
    if (!s.state().stage(name).op->reduce_axes.empty() && rule_rfactor(s, name, o)) continue;
    rule_parallel_vectorize(s, name, o);
  }
  return s;
}

Decisions decisions_of(const Trace& trace) {
  Decisions d;
  for (auto& in : trace.insts)
    if (in.is_sampling()) d.push_back(in.decision);
  return d;
}

}  // namespace tuner::search
