// A worker for a CUDA target (`tuner-worker --target=cuda[ -arch=sm_XX]`) checks, before it
// registers, that this host has a device that runs that code, and refuses to start otherwise.
#pragma once

#include "worker/worker.h"

namespace tuner::worker {

/// A target string's kind, its first word ("llvm", "cuda", ...).
std::string target_kind(const std::string& target);
/// True for "cuda" targets.
bool is_cuda_target(const std::string& target);

/// For a CUDA target: finds the device (UserError naming what is missing when there is
/// none), completes the target with the device's arch when none is given ("cuda" ->
/// "cuda -arch=sm_86"), and sets the runner's device and limits. Returns the device's
/// description for the log ("NVIDIA A100-SXM4-40GB (sm_80, 40.0 GiB)").
std::string use_cuda_device(WorkerOptions* o);

}  // namespace tuner::worker
