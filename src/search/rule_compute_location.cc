#include "search/rules.h"

namespace tuner::search {

schedule::Location rule_compute_location(schedule::Schedule& s, const std::string& stage) {
  s.compute_location(stage, s.sample_compute_location(stage));
  return s.state().stage(stage).loc;
}

}  // namespace tuner::search
