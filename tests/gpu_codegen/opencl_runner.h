// A small OpenCL runner for the tests: builds the OpenCL C of GPU kernels on the CPU platform
// (PoCL) and runs a lowered function's kernels with their launch dimensions, so GPU
// schedules (barriers and shared memory included) are checked without a GPU.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ops/host_tensor.h"
#include "schedule/lower_gpu.h"

namespace tuner::testing {

class OpenCLProgram;

class OpenCLRunner {
 public:
  /// The process-wide runner on the first CPU device; nullptr with `*missing` saying what is
  /// missing (no platform, no CPU device).
  static OpenCLRunner* get(std::string* missing);
  ~OpenCLRunner();

  /// Builds OpenCL C; throws std::runtime_error with the build log when it fails. Without
  /// `optimize`, PoCL compiles 5-20x faster (-cl-opt-disable) but no longer tries the code
  /// as optimized (undefined behaviour an optimizer exploits goes unseen).
  std::shared_ptr<OpenCLProgram> build(const std::string& source, bool optimize = true);

  /// Runs every kernel of `f` (in order) from `program` on `inputs`; returns the outputs.
  std::vector<ops::HostTensor> run(OpenCLProgram& program, const schedule::GpuLoweredFunc& f,
                                   const std::vector<ops::HostTensor>& inputs);

  /// True when the device offers the OpenCL extension `name` (cl_khr_fp16).
  bool has_extension(const std::string& name) const;

  /// "Portable Computing Language / cpu-..."
  const std::string& device_name() const { return name_; }

 private:
  struct Impl;
  explicit OpenCLRunner(std::unique_ptr<Impl> impl, std::string name);
  std::unique_ptr<Impl> impl_;
  std::string name_;
};

}  // namespace tuner::testing
