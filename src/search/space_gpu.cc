#include "search/space_gpu.h"

#include <set>

#include "schedule/analysis.h"
#include "search/rules.h"

namespace tuner::search {

using namespace schedule;

Schedule generate_gpu_schedule(const te::ComputeDAG& dag, const SpaceOptions& o, uint64_t seed,
                               const Decisions* presets) {
  Schedule s(dag, seed);
  if (presets) s.preset_decisions(*presets);
  rule_auto_inline(s);
  std::vector<std::string> names;
  for (auto& st : s.state().stages()) names.push_back(st.name());
  std::set<std::string> handled = tiled_epilogues(s.state());
  // Consumers first, as in the CPU space; every stage left at root is auto-bound.
  for (auto it = names.rbegin(); it != names.rend(); ++it) {
    const std::string& name = *it;
    if (handled.count(name) || !s.state().has_stage(name)) continue;
    const Stage& st = s.state().stage(name);
    if (st.loc != Location::Root) continue;
    handled.insert(name);
    if (is_tiled_reduction(st)) {
      rule_gpu_multi_level_tiling(s, name, o);
      handled.insert(name + ".local");
      continue;
    }
    if (!st.op->reduce_axes.empty()) {
      std::string rf = rule_gpu_rfactor(s, name, o);
      if (!rf.empty()) rule_gpu_auto_bind(s, rf, o);
    }
    rule_gpu_auto_bind(s, name, o);
  }
  return s;
}

SpaceOptions space_options_for(const codegen::Target& target) {
  SpaceOptions o;
  if (target.is_cuda()) o.gpu = true;
  else {
    o.vector_lanes = target.vector_lanes();
    o.vector_registers = target.vector_registers();
  }
  return o;
}

}  // namespace tuner::search
