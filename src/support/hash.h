// Stable (platform- and run-independent) hashing for workload identity and deduplication.
#pragma once

#include <cstdint>
#include <cstring>
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

/// A 64-bit checksum of a byte string, 8 bytes per step (several times FNV-1a's speed, for
/// files of many MB): each step is a bijection of the state, so a change to any one 8-byte
/// word always changes the result. Detects corruption, not tampering.
inline uint64_t checksum64(std::string_view s, uint64_t h = 0xcbf29ce484222325ull) {
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
  }
  return fnv1a64(s.substr(i), h);
}

/// Mixes `v` into `seed` (boost-style, with a 64-bit constant).
inline uint64_t hash_combine(uint64_t seed, uint64_t v) {
  return seed ^ (v + 0x9e3779b97f4a7c15ull + (seed << 12) + (seed >> 4));
}

}  // namespace tuner
