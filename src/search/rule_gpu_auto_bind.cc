#include "schedule/gpu_fallback.h"
#include "search/rules.h"

namespace tuner::search {

void rule_gpu_auto_bind(schedule::Schedule& s, const std::string& stage, const SpaceOptions& o) {
  int64_t threads = s.categorical_value(s.sample_categorical(o.gpu_threads));
  schedule::auto_bind(s, stage, threads);
  s.auto_unroll_sampled(stage, s.sample_categorical(o.gpu_unroll_steps));
}

}  // namespace tuner::search
