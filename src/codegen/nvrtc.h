// CUDA C to PTX and cubin with NVRTC (no GPU needed), with each kernel's registers, shared
// memory and spills read from ptxas' verbose log (`--ptxas-options=-v`, which NVRTC 13
// passes through). Built with NVRTC only when CMake finds the CUDA toolkit; otherwise
// nvrtc_available() is false and nvrtc_compile throws a UserError saying so.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tuner::codegen {

/// Resources ptxas reports for one kernel.
struct NvrtcKernelInfo {
  std::string name;
  int registers = 0;
  int64_t shared_bytes = 0;  // static shared memory
  int64_t stack_bytes = 0;
  int64_t spill_stores = 0, spill_loads = 0;  // bytes
};

struct NvrtcOutput {
  std::string ptx;
  std::string cubin;  // ELF bytes
  std::string log;
  std::vector<NvrtcKernelInfo> kernels;
  double seconds = 0;  // wall time of the compile
};

/// NVRTC rejected the source (a COMPILE_DEVICE error); what() holds its log.
class NvrtcError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The error diagnostics of an NVRTC log, without its warnings and source excerpts: at most
/// `max_errors` of them joined by "; ", then how many more there were.
std::string nvrtc_errors(const std::string& log, int max_errors = 3);

/// True when Tuner was built with NVRTC.
bool nvrtc_available();
/// "13.0", or why it is not available.
std::string nvrtc_version();

/// Compiles CUDA C for `arch` (sm_80, sm_90, ...) to PTX and cubin.
NvrtcOutput nvrtc_compile(const std::string& source, const std::string& arch,
                          const std::string& program_name = "tuner.cu");

/// Per-kernel resources from a ptxas verbose log (in the log's order).
std::vector<NvrtcKernelInfo> parse_ptxas_log(const std::string& log);

}  // namespace tuner::codegen
