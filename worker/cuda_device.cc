#include "worker/cuda_device.h"

#include <fmt/format.h>

#include <sstream>

#include "measure/cuda_driver.h"
#include "support/error.h"

namespace tuner::worker {

std::string target_kind(const std::string& target) {
  std::istringstream is(target);
  std::string kind;
  is >> kind;
  return kind;
}

bool is_cuda_target(const std::string& target) { return target_kind(target) == "cuda"; }

std::string use_cuda_device(WorkerOptions* o) {
  // The arch, if the target names one (the server canonicalizes the rest).
  std::string arch;
  std::istringstream is(o->target);
  for (std::string tok; is >> tok;)
    if (tok.rfind("-arch=", 0) == 0) arch = tok.substr(6);

  measure::cuda::DeviceInfo dev;
  std::string why;
  if (arch.empty()) {
    std::vector<measure::cuda::DeviceInfo> devices;
    why = measure::cuda::probe(&devices);
    if (why.empty()) dev = devices.front();
  } else {
    why = measure::cuda::find_device_for_arch(arch, &dev);
  }
  USER_CHECK(why.empty()) << "tuner-worker --target='" << o->target
                          << "' needs a usable CUDA device on this host: " << why;
  if (arch.empty()) o->target = "cuda -arch=" + dev.arch();
  o->runner.cuda_device = dev.ordinal;
  // The CUDA driver maps far more virtual memory than any address-space limit would allow; a
  // GPU kernel cannot allocate host memory anyway.
  o->runner.memory_limit_mb = 0;
  return fmt::format("{} ({}, {:.1f} GiB, device {})", dev.name, dev.arch(),
                     double(dev.memory_bytes) / double(1 << 30), dev.ordinal);
}

}  // namespace tuner::worker
