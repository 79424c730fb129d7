#include "runtime/cpu_features.h"

#include <algorithm>
#include <utility>

namespace tuner::runtime {

namespace {

#if defined(__x86_64__) || defined(__i386__)
// __builtin_cpu_supports takes a literal, hence one lambda per feature. The vector features
// are what our kernels use; the rest are scalar extensions LLVM emits for -mcpu on its own.
#define TUNER_CPU_FEATURE(llvm_name, gcc_name) \
  { llvm_name, [] { return bool(__builtin_cpu_supports(gcc_name)); } }
const std::vector<std::pair<std::string, bool (*)()>>& table() {
  static const std::vector<std::pair<std::string, bool (*)()>> t = {
      TUNER_CPU_FEATURE("sse4.1", "sse4.1"),     TUNER_CPU_FEATURE("sse4.2", "sse4.2"),
      TUNER_CPU_FEATURE("popcnt", "popcnt"),     TUNER_CPU_FEATURE("avx", "avx"),
      TUNER_CPU_FEATURE("avx2", "avx2"),         TUNER_CPU_FEATURE("fma", "fma"),
      TUNER_CPU_FEATURE("bmi", "bmi"),           TUNER_CPU_FEATURE("bmi2", "bmi2"),
      TUNER_CPU_FEATURE("avx512f", "avx512f"),   TUNER_CPU_FEATURE("avx512vl", "avx512vl"),
      TUNER_CPU_FEATURE("avx512bw", "avx512bw"), TUNER_CPU_FEATURE("avx512dq", "avx512dq"),
      TUNER_CPU_FEATURE("avx512cd", "avx512cd"), TUNER_CPU_FEATURE("avx512vnni", "avx512vnni"),
      TUNER_CPU_FEATURE("avx512vbmi", "avx512vbmi"),
      TUNER_CPU_FEATURE("avx512bf16", "avx512bf16"),
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
