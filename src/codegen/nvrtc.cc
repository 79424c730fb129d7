#include "codegen/nvrtc.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <regex>
#include <sstream>

#include "support/error.h"

#ifdef TUNER_HAVE_NVRTC
#include <nvrtc.h>
#endif

namespace tuner::codegen {

std::vector<NvrtcKernelInfo> parse_ptxas_log(const std::string& log) {
  static const std::regex entry(R"(Compiling entry function '([^']+)')");
  static const std::regex frame(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex regs(R"(Used (\d+) registers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  std::vector<NvrtcKernelInfo> out;
  std::istringstream is(log);
  std::string line;
  std::smatch m;
  while (std::getline(is, line)) {
    if (std::regex_search(line, m, entry)) {
      out.push_back({m[1].str()});
      continue;
    }
    if (out.empty()) continue;
    NvrtcKernelInfo& k = out.back();
    if (std::regex_search(line, m, frame)) {
      k.stack_bytes = std::stoll(m[1].str());
      k.spill_stores = std::stoll(m[2].str());
      k.spill_loads = std::stoll(m[3].str());
    }
    if (std::regex_search(line, m, regs)) k.registers = std::stoi(m[1].str());
    if (std::regex_search(line, m, smem)) k.shared_bytes = std::stoll(m[1].str());
  }
  return out;
}

std::string nvrtc_errors(const std::string& log, int max_errors) {
  // A diagnostic line is "file(line): error: text"; the lines after it quote the source.
  static const std::regex error(R"((^|: )(catastrophic )?error( #[0-9A-Za-z-]+)?: )");
  std::istringstream is(log);
  std::string line, out;
  int n = 0;
  while (std::getline(is, line)) {
    if (!std::regex_search(line, error)) continue;
    if (n++ < max_errors) out += (out.empty() ? "" : "; ") + line;
  }
  if (n > max_errors)
    out += fmt::format(" (and {} more error{})", n - max_errors, n - max_errors > 1 ? "s" : "");
  return out;
}

#ifdef TUNER_HAVE_NVRTC

namespace {

void check(nvrtcResult r, const char* what) {
  INTERNAL_CHECK(r == NVRTC_SUCCESS) << what << ": " << nvrtcGetErrorString(r);
}

}  // namespace

bool nvrtc_available() { return true; }

std::string nvrtc_version() {
  int major = 0, minor = 0;
  check(nvrtcVersion(&major, &minor), "nvrtcVersion");
  return std::to_string(major) + "." + std::to_string(minor);
}

// The architectures this NVRTC compiles for; an arch outside them is one line naming the range
// (NVRTC says "invalid value for --gpu-architecture").
void check_arch_supported(const std::string& arch) {
  static const std::vector<int> archs = [] {
    int n = 0;
    std::vector<int> a;
    if (nvrtcGetNumSupportedArchs(&n) == NVRTC_SUCCESS && n > 0) {
      a.resize(size_t(n));
      if (nvrtcGetSupportedArchs(a.data()) != NVRTC_SUCCESS) a.clear();
    }
    return a;
  }();
  std::smatch m;
  static const std::regex number(R"(sm_([0-9]+)[a-z]?)");
  if (archs.empty() || !std::regex_match(arch, m, number)) return;
  int v = std::stoi(m[1].str());
  USER_CHECK(std::find(archs.begin(), archs.end(), v) != archs.end())
      << "NVRTC " << nvrtc_version() << " does not compile for " << arch << " (it supports sm_"
      << archs.front() << " to sm_" << archs.back() << ")";
}

NvrtcOutput nvrtc_compile(const std::string& source, const std::string& arch, const std::string& name) {
  check_arch_supported(arch);
  auto t0 = std::chrono::steady_clock::now();
  nvrtcProgram prog;
  check(nvrtcCreateProgram(&prog, source.c_str(), name.c_str(), 0, nullptr, nullptr), "nvrtcCreateProgram");
  struct Guard {
    nvrtcProgram* p;
    ~Guard() { nvrtcDestroyProgram(p); }
  } guard{&prog};
  std::string arch_opt = "-arch=" + arch, include_opt = "--include-path=" TUNER_CUDA_INCLUDE_DIR;
  const char* opts[] = {arch_opt.c_str(), "--ptxas-options=-v", include_opt.c_str()};
  nvrtcResult r = nvrtcCompileProgram(prog, 3, opts);
  NvrtcOutput out;
  size_t n = 0;
  check(nvrtcGetProgramLogSize(prog, &n), "nvrtcGetProgramLogSize");
  out.log.resize(n);
  if (n) check(nvrtcGetProgramLog(prog, out.log.data()), "nvrtcGetProgramLog");
  while (!out.log.empty() && out.log.back() == '\0') out.log.pop_back();
  if (r != NVRTC_SUCCESS) {
    std::string errors = nvrtc_errors(out.log);
    throw NvrtcError("NVRTC (" + arch + "): " + nvrtcGetErrorString(r) + ": " +
                     (errors.empty() ? out.log : errors));
  }
  check(nvrtcGetPTXSize(prog, &n), "nvrtcGetPTXSize");
  out.ptx.resize(n);
  check(nvrtcGetPTX(prog, out.ptx.data()), "nvrtcGetPTX");
  while (!out.ptx.empty() && out.ptx.back() == '\0') out.ptx.pop_back();
  check(nvrtcGetCUBINSize(prog, &n), "nvrtcGetCUBINSize");
  out.cubin.resize(n);
  check(nvrtcGetCUBIN(prog, out.cubin.data()), "nvrtcGetCUBIN");
  out.kernels = parse_ptxas_log(out.log);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

#else

bool nvrtc_available() { return false; }

std::string nvrtc_version() { return "not available (Tuner was built without the CUDA toolkit)"; }

NvrtcOutput nvrtc_compile(const std::string&, const std::string&, const std::string&) {
  USER_ERROR() << "CUDA compilation is not available: Tuner was built without the CUDA toolkit "
                  "(install it under /usr/local/cuda and re-run cmake, TUNER_WITH_CUDA=AUTO or ON)";
  return {};
}

#endif

}  // namespace tuner::codegen
