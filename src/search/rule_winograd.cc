#include <algorithm>

#include "search/rules.h"

namespace tuner::search {

using schedule::Schedule;

std::vector<std::string> rule_winograd(Schedule& s, const schedule::WinogradStages& w, const SpaceOptions& o) {
  // The fallback's sizes are the starting point; each choice is a categorical over sizes that
  // keep the block in L2 and the register tile in registers (a few dozen points in all, which
  // the search's random samples cover; the generic rules' candidates for these stages ran up
  // to 50x slower than this shape).
  std::optional<schedule::WinogradBlock> fb;
  if (o.like_fallback) fb = schedule::fallback_winograd_block(s.state(), w, o.vector_lanes, o.vector_registers);
  auto choose = [&](const std::vector<int64_t>& candidates, int64_t preferred) {
    if (fb) {
      auto it = std::find(candidates.begin(), candidates.end(), preferred);
      if (it != candidates.end()) s.preset_next({int64_t(it - candidates.begin())});
    }
    return s.categorical_value(s.sample_categorical(candidates));
  };
  schedule::WinogradBlock b;
  b.rows = choose(schedule::winograd_rows_candidates(s.state(), w), fb ? fb->rows : 0);
  b.tile_p = choose(schedule::winograd_tile_p_candidates(s.state(), w, b.rows), fb ? fb->tile_p : 0);
  b.tile_k = choose(schedule::winograd_tile_k_candidates(s.state(), w, b.rows, b.tile_p, o.vector_lanes, o.vector_registers),
                    fb ? fb->tile_k : 0);
  // Drawn last: traces from before it existed replay their decisions unchanged.
  b.k_parts = choose(schedule::winograd_k_parts_candidates(s.state(), w, b.rows, b.tile_k, o.vector_lanes),
                     fb ? fb->k_parts : 0);
  return schedule::schedule_winograd_conv(s, w, b, o.vector_lanes);
}

}  // namespace tuner::search
