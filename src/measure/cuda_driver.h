// The CUDA driver API, loaded at run time from libcuda.so.1 (part of the NVIDIA driver), so
// that the tuner's binaries start on hosts without a GPU and a worker can say exactly what is
// missing. Compiled with the toolkit's cuda.h for the types (TUNER_HAVE_CUDA); without it the
// functions here report that this build has no CUDA support.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tuner::measure::cuda {

/// One CUDA device as the driver reports it.
struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;  // compute capability
  int64_t memory_bytes = 0;
  int l2_bytes = 0;
  int sm_count = 0;
  /// "sm_80" etc.
  std::string arch() const { return "sm_" + std::to_string(cc_major) + std::to_string(cc_minor); }
};

/// True when this build can drive CUDA devices (the toolkit's headers were found).
bool built_with_cuda();

/// Loads and initialises the driver and lists the devices; returns an empty string on
/// success, else why no device can be used ("libcuda.so.1 not found ...", "no CUDA device").
std::string probe(std::vector<DeviceInfo>* devices);

/// Finds a device that can run cubins built for `arch` ("sm_90"): same major compute
/// capability and at least its minor one (cubins are forward compatible only within a major
/// version; sm_90a-style arch-specific code only on that exact device). Returns an empty
/// string and sets *chosen, or a one-line reason naming the devices present.
std::string find_device_for_arch(const std::string& arch, DeviceInfo* chosen);

}  // namespace tuner::measure::cuda
