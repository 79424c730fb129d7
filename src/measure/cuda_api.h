// The driver functions the tuner uses, resolved from libcuda.so.1 with dlsym (only when built
// with the toolkit's cuda.h: TUNER_HAVE_CUDA). cuda.h maps API names to their current ABI
// versions with macros (cuMemAlloc -> cuMemAlloc_v2, ...); the table below is declared and
// looked up through those same macros, so each pointer has the prototype and the exported
// symbol name that cuda.h selects.
#pragma once

#ifdef TUNER_HAVE_CUDA
#include <cuda.h>

#include <string>

namespace tuner::measure::cuda {

#define TUNER_CUDA_FUNCTIONS(X)                                                              \
  X(cuInit) X(cuDriverGetVersion) X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName)      \
  X(cuDeviceGetAttribute) X(cuDeviceTotalMem) X(cuDevicePrimaryCtxRetain)                    \
  X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) X(cuCtxSynchronize) X(cuGetErrorName)      \
  X(cuGetErrorString) X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction)           \
  X(cuFuncGetAttribute) X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyDtoH)           \
  X(cuMemsetD8) X(cuMemsetD32) X(cuLaunchKernel) X(cuEventCreate) X(cuEventDestroy)          \
  X(cuEventRecord) X(cuEventSynchronize) X(cuEventElapsedTime)

/// Pointers to the driver's functions, named as in cuda.h.
struct Api {
#define TUNER_CUDA_DECLARE(fn) decltype(&::fn) fn = nullptr;
  TUNER_CUDA_FUNCTIONS(TUNER_CUDA_DECLARE)
#undef TUNER_CUDA_DECLARE
};

/// The driver, loaded and initialised once (cuInit); nullptr and *error set when it cannot
/// be (no libcuda.so.1, a driver older than the functions above, cuInit failing).
const Api* api(std::string* error);

/// "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered".
std::string describe(const Api& a, CUresult r);

}  // namespace tuner::measure::cuda
#endif  // TUNER_HAVE_CUDA
