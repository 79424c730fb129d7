// Stable (platform- and run-independent) hashing for workload identity and deduplication.
#pragma once

#include <cstdint>
#include <string_view>

namespace tuner {

/// 64-bit FNV-1a of a byte string: stable across runs, compilers and machines.
inline uint64_t fnv1a64(std::string_view s, uint64_t h = 0xcbf29ce484222325ull) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

/// Mixes `v` into `seed` (boost-style, with a 64-bit constant).
inline uint64_t hash_combine(uint64_t seed, uint64_t v) {
  return seed ^ (v + 0x9e3779b97f4a7c15ull + (seed << 12) + (seed >> 4));
}

}  // namespace tuner
