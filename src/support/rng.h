// The one seeded random generator of a tuning run. Distributions are written out here
// instead of using <random>'s, whose outputs differ between standard libraries: the same
// seed must give the same search everywhere.
#pragma once

#include <cstdint>
#include <vector>

#include "support/error.h"

namespace tuner {

/// splitmix64-seeded xoshiro256** generator with portable distributions.
class Rng {
 public:
  explicit Rng(uint64_t seed = 0) { reseed(seed); }

  void reseed(uint64_t seed) {
    for (auto& s : s_) {
      seed += 0x9e3779b97f4a7c15ull;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      s = z ^ (z >> 31);
    }
  }

  /// Next raw 64-bit value.
  uint64_t next() {
    uint64_t result = rotl(s_[1] * 5, 7) * 9;
    uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  /// Uniform integer in [lo, hi] (inclusive), unbiased.
  int64_t uniform_int(int64_t lo, int64_t hi) {
    INTERNAL_CHECK(lo <= hi) << lo << " > " << hi;
    uint64_t range = uint64_t(hi - lo) + 1;
    if (range == 0) return int64_t(next());
    uint64_t limit = UINT64_MAX - UINT64_MAX % range;
    uint64_t x;
    do x = next(); while (x >= limit);
    return lo + int64_t(x % range);
  }

  /// Uniform double in [0, 1).
  double uniform() { return double(next() >> 11) * (1.0 / 9007199254740992.0); }

  /// True with probability p.
  bool bernoulli(double p) { return uniform() < p; }

  /// Index drawn with the given (non-negative, not all zero) weights.
  size_t weighted(const std::vector<double>& w) {
    double total = 0;
    for (double x : w) total += x;
    INTERNAL_CHECK(total > 0) << "all weights are zero";
    double r = uniform() * total;
    for (size_t i = 0; i < w.size(); ++i) {
      if (r < w[i]) return i;
      r -= w[i];
    }
    return w.size() - 1;
  }

  /// A uniformly chosen element index of a container of size n (n > 0).
  size_t pick(size_t n) { return size_t(uniform_int(0, int64_t(n) - 1)); }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace tuner
