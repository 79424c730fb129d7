// Program features for the learned cost model: a fixed-length vector per buffer store of the
// candidate's loop IR (see features.cc for the groups). Versioned: a model refuses features
// of another version.
#pragma once

#include <vector>

#include "schedule/state.h"

namespace tuner::costmodel {

/// Bump when the meaning or order of any feature changes.
constexpr int kFeatureVersion = 2;
constexpr int kBuffersPerStore = 5;
constexpr int kFeaturesPerBuffer = 13;
/// 9 compute + 15 loop + 5 x 13 buffer + 2 allocation/outer + 2 cache-fit features.
constexpr int kFeaturesPerStore = 9 + 15 + kBuffersPerStore * kFeaturesPerBuffer + 2 + 2;

/// One feature vector per buffer store of the scheduled program, in program order.
std::vector<std::vector<float>> extract_store_features(const schedule::State& state);

}  // namespace tuner::costmodel
