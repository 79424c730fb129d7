// A cost model that knows nothing: uniform random scores (a baseline and for tests).
#pragma once

#include "costmodel/cost_model.h"
#include "support/rng.h"

namespace tuner::costmodel {

class RandomModel : public CostModel {
 public:
  explicit RandomModel(uint64_t seed = 0) : rng_(seed) {}
  std::vector<double> predict(const te::ComputeDAG&,
                              const std::vector<const schedule::State*>& states) override {
    std::vector<double> s(states.size());
    for (auto& x : s) x = rng_.uniform();
    return s;
  }
  void update(const te::ComputeDAG&, const std::vector<const schedule::State*>&,
              const std::vector<double>&) override {}

 private:
  Rng rng_;
};

}  // namespace tuner::costmodel
