#include "measure/cuda_driver.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cctype>
#include <mutex>
#include <string_view>

#include "measure/cuda_api.h"

namespace tuner::measure::cuda {

#ifdef TUNER_HAVE_CUDA

#define TUNER_CUDA_STR2(x) #x
#define TUNER_CUDA_STR(x) TUNER_CUDA_STR2(x)

namespace {

// Resolves every function; the empty string on success.
std::string load(Api* a) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    return fmt::format("no NVIDIA driver on this host ({})", dlerror());
  std::string missing;
  auto resolve = [&](const char* name, const char* fallback, void** slot) {
    *slot = dlsym(lib, name);
    // cuEventElapsedTime_v2 (CUDA 12.8) has the prototype of the older export.
    if (!*slot && fallback) *slot = dlsym(lib, fallback);
    if (!*slot) missing += missing.empty() ? name : std::string(", ") + name;
  };
#define TUNER_CUDA_RESOLVE(fn)                                                           \
  resolve(TUNER_CUDA_STR(fn),                                                            \
          std::string_view(TUNER_CUDA_STR(fn)) == "cuEventElapsedTime_v2" ? "cuEventElapsedTime" \
                                                                           : nullptr,    \
          reinterpret_cast<void**>(&a->fn));
  TUNER_CUDA_FUNCTIONS(TUNER_CUDA_RESOLVE)
#undef TUNER_CUDA_RESOLVE
  if (!missing.empty())
    return fmt::format("the NVIDIA driver is older than this build needs (CUDA {}.{}): "
                       "libcuda.so.1 lacks {}",
                       CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10, missing);
  if (CUresult r = a->cuInit(0); r == CUDA_ERROR_STUB_LIBRARY)
    return "the libcuda.so.1 found is the CUDA toolkit's stub, not the NVIDIA driver";
  else if (r != CUDA_SUCCESS)
    return "cuInit failed: " + describe(*a, r);
  return "";
}

}  // namespace

const Api* api(std::string* error) {
  static Api table;
  static std::string load_error;
  static std::once_flag once;
  std::call_once(once, [] { load_error = load(&table); });
  if (!load_error.empty()) {
    if (error) *error = load_error;
    return nullptr;
  }
  return &table;
}

std::string describe(const Api& a, CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (a.cuGetErrorName) a.cuGetErrorName(r, &name);
  if (a.cuGetErrorString) a.cuGetErrorString(r, &text);
  return fmt::format("{}: {}", name ? name : fmt::format("CUresult {}", int(r)),
                     text ? text : "unknown error");
}

bool built_with_cuda() { return true; }

std::string probe(std::vector<DeviceInfo>* devices) {
  std::string error;
  const Api* a = api(&error);
  if (!a) return error;
  int count = 0;
  if (CUresult r = a->cuDeviceGetCount(&count); r != CUDA_SUCCESS)
    return "cuDeviceGetCount failed: " + describe(*a, r);
  if (count == 0) return "the NVIDIA driver is loaded but reports no CUDA device";
  for (int i = 0; i < count; ++i) {
    CUdevice dev;
    if (CUresult r = a->cuDeviceGet(&dev, i); r != CUDA_SUCCESS)
      return fmt::format("cuDeviceGet({}) failed: {}", i, describe(*a, r));
    DeviceInfo d;
    d.ordinal = i;
    char name[256] = {};
    a->cuDeviceGetName(name, sizeof name - 1, dev);
    d.name = name;
    a->cuDeviceGetAttribute(&d.cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    a->cuDeviceGetAttribute(&d.cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    a->cuDeviceGetAttribute(&d.l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev);
    a->cuDeviceGetAttribute(&d.sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
    size_t mem = 0;
    a->cuDeviceTotalMem(&mem, dev);
    d.memory_bytes = int64_t(mem);
    if (devices) devices->push_back(d);
  }
  return "";
}

#else  // !TUNER_HAVE_CUDA

bool built_with_cuda() { return false; }

std::string probe(std::vector<DeviceInfo>*) {
  return "this build has no CUDA support (the CUDA toolkit was not found when it was built)";
}

#endif

std::string find_device_for_arch(const std::string& arch, DeviceInfo* chosen) {
  std::vector<DeviceInfo> devices;
  if (std::string why = probe(&devices); !why.empty()) return why;
  // "sm_90", "sm_90a": major digits then one minor digit, an optional arch-specific suffix.
  std::string digits, suffix;
  if (arch.rfind("sm_", 0) == 0)
    for (char c : arch.substr(3)) (isdigit((unsigned char)c) && suffix.empty() ? digits : suffix) += c;
  if (digits.size() < 2) return "bad CUDA architecture '" + arch + "' (expected e.g. sm_80)";
  int major = std::stoi(digits.substr(0, digits.size() - 1));
  int minor = digits.back() - '0';
  std::string present;
  for (const DeviceInfo& d : devices) {
    bool ok = d.cc_major == major && (suffix.empty() ? d.cc_minor >= minor : d.cc_minor == minor);
    if (ok) {
      *chosen = d;
      return "";
    }
    present += fmt::format("{}{} ({}, {})", present.empty() ? "" : ", ", d.ordinal, d.name,
                           d.arch());
  }
  return fmt::format("no CUDA device here can run {} code; devices: {}", arch, present);
}

}  // namespace tuner::measure::cuda
