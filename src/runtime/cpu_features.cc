#include "runtime/cpu_features.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace tuner::runtime {

namespace {

#if defined(__x86_64__) || defined(__i386__)
// Bit `bit` of register `reg` (0 EAX ... 3 EDX) of CPUID leaf 7, subleaf 1: the extensions
// GCC 12's __builtin_cpu_supports does not know.
bool leaf7_1(int reg, int bit) {
  unsigned r[4] = {};
  if (!__get_cpuid_count(7, 1, &r[0], &r[1], &r[2], &r[3])) return false;
  return (r[reg] >> bit) & 1;
}

// Whether the OS saves the register state of XCR0 bit `bit` (APX's extended GPRs: 19).
bool os_saves(int bit) {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !((c >> 27) & 1)) return false;  // OSXSAVE
  unsigned lo, hi;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (((uint64_t(hi) << 32) | lo) >> bit) & 1;
}

bool apx() { return leaf7_1(3, 21) && os_saves(19); }

// Bit `bit` of ECX of CPUID leaf 0x80000001 (AMD's extensions: TBM is bit 21).
bool ext_leaf1_ecx(int bit) {
  unsigned a, b, c, d;
  if (!__get_cpuid(0x80000001, &a, &b, &c, &d)) return false;
  return (c >> bit) & 1;
}
bool amx() { return __builtin_cpu_supports("amx-tile"); }  // the OS enables the tile state

// __builtin_cpu_supports takes a literal, hence one lambda per feature. Every instruction-set
// extension LLVM may emit for a kernel's arithmetic, memory access and scalar code; system
// features (pku, mwaitx, rdpru, ...) are left out: kernels never use them, and a VM's CPUID
// hides some (artifacts for skylake-avx512 or znver3 were refused on a Zen 5 VM for them).
#define TUNER_CPU_FEATURE(llvm_name, gcc_name) \
  { llvm_name, [] { return bool(__builtin_cpu_supports(gcc_name)); } }
const std::vector<std::pair<std::string, bool (*)()>>& table() {
  static const std::vector<std::pair<std::string, bool (*)()>> t = {
      TUNER_CPU_FEATURE("sse3", "sse3"),
      TUNER_CPU_FEATURE("ssse3", "ssse3"),
      TUNER_CPU_FEATURE("sse4.1", "sse4.1"),
      TUNER_CPU_FEATURE("sse4.2", "sse4.2"),
      // AMD's own (Bulldozer to Excavator): LLVM emits FMA4 multiply-adds for -mcpu=bdver*.
      TUNER_CPU_FEATURE("sse4a", "sse4a"),
      TUNER_CPU_FEATURE("fma4", "fma4"),
      TUNER_CPU_FEATURE("xop", "xop"),
      {"tbm", [] { return ext_leaf1_ecx(21); }},
      TUNER_CPU_FEATURE("popcnt", "popcnt"),
      TUNER_CPU_FEATURE("lzcnt", "lzcnt"),
      TUNER_CPU_FEATURE("movbe", "movbe"),
      TUNER_CPU_FEATURE("bmi", "bmi"),
      TUNER_CPU_FEATURE("bmi2", "bmi2"),
      TUNER_CPU_FEATURE("adx", "adx"),
      TUNER_CPU_FEATURE("aes", "aes"),
      TUNER_CPU_FEATURE("pclmul", "pclmul"),
      TUNER_CPU_FEATURE("sha", "sha"),
      TUNER_CPU_FEATURE("avx", "avx"),
      TUNER_CPU_FEATURE("avx2", "avx2"),
      TUNER_CPU_FEATURE("fma", "fma"),
      TUNER_CPU_FEATURE("f16c", "f16c"),
      TUNER_CPU_FEATURE("gfni", "gfni"),
      TUNER_CPU_FEATURE("vaes", "vaes"),
      TUNER_CPU_FEATURE("vpclmulqdq", "vpclmulqdq"),
      TUNER_CPU_FEATURE("avxvnni", "avxvnni"),
      TUNER_CPU_FEATURE("avx512f", "avx512f"),
      TUNER_CPU_FEATURE("avx512vl", "avx512vl"),
      TUNER_CPU_FEATURE("avx512bw", "avx512bw"),
      TUNER_CPU_FEATURE("avx512dq", "avx512dq"),
      TUNER_CPU_FEATURE("avx512cd", "avx512cd"),
      TUNER_CPU_FEATURE("avx512vnni", "avx512vnni"),
      TUNER_CPU_FEATURE("avx512vbmi", "avx512vbmi"),
      TUNER_CPU_FEATURE("avx512vbmi2", "avx512vbmi2"),
      TUNER_CPU_FEATURE("avx512bitalg", "avx512bitalg"),
      TUNER_CPU_FEATURE("avx512vpopcntdq", "avx512vpopcntdq"),
      TUNER_CPU_FEATURE("avx512ifma", "avx512ifma"),
      TUNER_CPU_FEATURE("avx512bf16", "avx512bf16"),
      TUNER_CPU_FEATURE("avx512fp16", "avx512fp16"),
      TUNER_CPU_FEATURE("avx512vp2intersect", "avx512vp2intersect"),
      TUNER_CPU_FEATURE("amx-tile", "amx-tile"),
      TUNER_CPU_FEATURE("amx-int8", "amx-int8"),
      TUNER_CPU_FEATURE("amx-bf16", "amx-bf16"),
      {"amx-fp16", [] { return amx() && leaf7_1(0, 21); }},
      {"amx-complex", [] { return amx() && leaf7_1(3, 8); }},
      {"avxifma", [] { return __builtin_cpu_supports("avx2") && leaf7_1(0, 23); }},
      {"avxvnniint8", [] { return __builtin_cpu_supports("avx2") && leaf7_1(3, 4); }},
      {"avxneconvert", [] { return __builtin_cpu_supports("avx2") && leaf7_1(3, 5); }},
      {"avxvnniint16", [] { return __builtin_cpu_supports("avx2") && leaf7_1(3, 10); }},
      {"sha512", [] { return __builtin_cpu_supports("avx2") && leaf7_1(0, 0); }},
      {"sm3", [] { return __builtin_cpu_supports("avx") && leaf7_1(0, 1); }},
      {"sm4", [] { return __builtin_cpu_supports("avx2") && leaf7_1(0, 2); }},
      {"cmpccxadd", [] { return leaf7_1(0, 7); }},
      // APX: 32 general registers and the new encodings, one CPUID bit and one state bit.
      {"egpr", apx}, {"push2pop2", apx}, {"ppx", apx}, {"ndd", apx}, {"ccmp", apx}, {"nf", apx},
      {"cf", apx}, {"zu", apx},
  };
  return t;
}
#undef TUNER_CPU_FEATURE
#else
const std::vector<std::pair<std::string, bool (*)()>>& table() {
  static const std::vector<std::pair<std::string, bool (*)()>> t;
  return t;
}
#endif

}  // namespace

const std::vector<std::string>& checkable_cpu_features() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& [name, has] : table()) v.push_back(name);
    return v;
  }();
  return names;
}

std::vector<std::string> host_lacks_cpu_features(const std::vector<std::string>& required) {
  std::vector<std::string> out;
  for (const std::string& f : required) {
    auto it = std::find_if(table().begin(), table().end(), [&](const auto& e) { return e.first == f; });
    if (it != table().end() && !it->second()) out.push_back(f);
  }
  return out;
}

}  // namespace tuner::runtime
