#include "schedule/analysis.h"
#include "search/rules.h"

namespace tuner::search {

void rule_auto_inline(schedule::Schedule& s) {
  for (auto& st : std::vector<schedule::Stage>(s.state().stages()))
    if (schedule::should_auto_inline(s.state(), st.name())) s.compute_inline(st.name());
}

}  // namespace tuner::search
