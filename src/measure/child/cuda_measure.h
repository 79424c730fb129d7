// The CUDA side of tuner-measure-child: runs one kernel (a cubin with its launch shape) on the
// task's inputs on a GPU, checks it and times it with CUDA events. Built into the child only
// with the CUDA toolkit's headers (TUNER_HAVE_CUDA); the driver itself is loaded at run time.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "support/json.h"

namespace tuner::measure {

/// The task as the CUDA path needs it: host bytes of the inputs, sizes of the outputs and a
/// check of an output against its expected value.
struct CudaTaskView {
  std::string id;
  std::vector<std::pair<const void*, size_t>> inputs;
  std::vector<size_t> output_bytes;
  /// Compares output i (host bytes) with the expected one: empty when it matches, else why.
  std::function<std::string(size_t, const void*)> check;
};

/// Handles a "run" request whose "cuda" object names the cubin, the entry point, "grid",
/// "block" and "shared_bytes" (protocol.h). The reply is the CPU path's: times or a typed
/// error; errors that leave the CUDA context unusable (illegal address, launch failure) are
/// RUNTIME_DEVICE with "fatal": true, so the runner starts a fresh child (a fresh context).
Json measure_cuda(const Json& req, const CudaTaskView& task);

}  // namespace tuner::measure
