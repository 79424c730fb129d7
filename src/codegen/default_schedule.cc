#include "codegen/default_schedule.h"

#include "schedule/fallback.h"
#include "schedule/gpu_fallback.h"

namespace tuner::codegen {

schedule::Schedule default_schedule(const te::ComputeDAG& dag, const Target& target) {
  if (target.is_cuda()) return schedule::gpu_fallback_schedule(dag);
  schedule::FallbackOptions fo;
  fo.vector_lanes = target.vector_lanes();
  fo.vector_registers = target.vector_registers();
  return schedule::fallback_schedule(dag, fo);
}

}  // namespace tuner::codegen
