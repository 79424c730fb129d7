// The cost model interface the search uses: batched predictions of candidate quality and
// updates with measured results.
#pragma once

#include <vector>

#include "schedule/state.h"

namespace tuner::costmodel {

class CostModel {
 public:
  virtual ~CostModel() = default;
  /// A score per candidate; higher means predicted faster.
  virtual std::vector<double> predict(const te::ComputeDAG& dag,
                                      const std::vector<const schedule::State*>& states) = 0;
  /// Learns from measured candidates; costs in seconds (infinity for failed candidates).
  virtual void update(const te::ComputeDAG& dag, const std::vector<const schedule::State*>& states,
                      const std::vector<double>& costs) = 0;
};

}  // namespace tuner::costmodel
