#include "measure/child/cuda_measure.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <memory>

#include "measure/cuda_api.h"
#include "measure/cuda_driver.h"

namespace tuner::measure {

namespace {

Json error(const std::string& status, const std::string& message, bool fatal = false) {
  Json j{{"status", status}, {"error", message}};
  if (fatal) j["fatal"] = true;
  return j;
}

}  // namespace

#ifndef TUNER_HAVE_CUDA

Json measure_cuda(const Json&, const CudaTaskView&) {
  return error("RUNTIME_DEVICE", cuda::probe(nullptr));
}

#else

namespace {

using cuda::Api;

// Device state that outlives requests: the context, the task's buffers (inputs uploaded
// once per task) and a buffer written between repeats to evict the L2 cache.
struct Session {
  const Api* a = nullptr;
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  std::string task_id;
  std::vector<CUdeviceptr> inputs, outputs, workspaces;
  std::vector<size_t> workspace_bytes;
  CUdeviceptr flush = 0;
  size_t flush_bytes = 0;

  void free_task() {
    for (auto* v : {&inputs, &outputs})
      for (CUdeviceptr p : *v) a->cuMemFree(p);
    inputs.clear();
    outputs.clear();
    task_id.clear();
  }
  void free_workspaces() {
    for (CUdeviceptr p : workspaces) a->cuMemFree(p);
    workspaces.clear();
    workspace_bytes.clear();
  }
};

// A failed driver call: why, and whether the context is still usable.
struct Failure {
  std::string message;
  bool fatal = false;
};

// Errors after which a CUDA context cannot be used again (they are "sticky").
bool sticky(CUresult r) {
  switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
      return true;
    default:
      return false;
  }
}

#define CU_TRY(what, call)                                                              \
  do {                                                                                  \
    if (CUresult r_ = (call); r_ != CUDA_SUCCESS)                                       \
      throw Failure{std::string(what) + ": " + cuda::describe(*s.a, r_), sticky(r_)}; \
  } while (0)

Session& session(int device) {
  static Session s;
  if (s.ctx) return s;
  std::string why;
  s.a = cuda::api(&why);
  if (!s.a) throw Failure{why, false};
  CU_TRY("cuDeviceGet", s.a->cuDeviceGet(&s.dev, device));
  CU_TRY("cuDevicePrimaryCtxRetain", s.a->cuDevicePrimaryCtxRetain(&s.ctx, s.dev));
  CU_TRY("cuCtxSetCurrent", s.a->cuCtxSetCurrent(s.ctx));
  int l2 = 0;
  s.a->cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, s.dev);
  s.flush_bytes = size_t(std::max(l2, 1 << 20)) * 2;
  CU_TRY("cuMemAlloc (L2 flush buffer)", s.a->cuMemAlloc(&s.flush, s.flush_bytes));
  return s;
}

void upload_task(Session& s, const CudaTaskView& task) {
  if (s.task_id == task.id) return;
  s.free_task();
  for (const auto& [data, bytes] : task.inputs) {
    CUdeviceptr p = 0;
    CU_TRY("cuMemAlloc (input)", s.a->cuMemAlloc(&p, std::max<size_t>(bytes, 4)));
    s.inputs.push_back(p);
    CU_TRY("cuMemcpyHtoD", s.a->cuMemcpyHtoD(p, data, bytes));
  }
  for (size_t bytes : task.output_bytes) {
    CUdeviceptr p = 0;
    CU_TRY("cuMemAlloc (output)", s.a->cuMemAlloc(&p, std::max<size_t>(bytes, 4)));
    s.outputs.push_back(p);
  }
  s.task_id = task.id;
}

// Workspaces for intermediates between a program's kernels, kept while the sizes repeat.
void ensure_workspaces(Session& s, const std::vector<size_t>& bytes) {
  if (s.workspace_bytes == bytes) return;
  s.free_workspaces();
  for (size_t b : bytes) {
    CUdeviceptr p = 0;
    CU_TRY("cuMemAlloc (workspace)", s.a->cuMemAlloc(&p, std::max<size_t>(b, 4)));
    s.workspaces.push_back(p);
    s.workspace_bytes.push_back(b);
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Failure{"cannot open " + path, false};
  return {std::istreambuf_iterator<char>(in), {}};
}

struct Module {
  const Api* a;
  CUmodule m = nullptr;
  ~Module() {
    if (m) a->cuModuleUnload(m);
  }
};

Json run(const Json& req, const CudaTaskView& task) {
  const Json& k = req.at("cuda");
  Session& s = session(k.value("device", 0));
  upload_task(s, task);

  ensure_workspaces(s, k.value("workspaces", std::vector<size_t>{}));

  std::string image = read_file(k.at("cubin").get<std::string>());
  Module mod{s.a};
  CU_TRY("loading the cubin", s.a->cuModuleLoadData(&mod.m, image.data()));
  struct Launch {
    CUfunction fn = nullptr;
    std::vector<unsigned> grid, block;
    unsigned shared = 0;
  };
  std::vector<Launch> launches;
  for (const Json& jk : k.at("kernels")) {
    Launch l;
    std::string entry = jk.at("entry").get<std::string>();
    CU_TRY("kernel '" + entry + "'", s.a->cuModuleGetFunction(&l.fn, mod.m, entry.c_str()));
    l.grid = jk.at("grid").get<std::vector<unsigned>>();
    l.block = jk.at("block").get<std::vector<unsigned>>();
    l.grid.resize(3, 1);
    l.block.resize(3, 1);
    l.shared = jk.value("shared_bytes", 0u);
    launches.push_back(std::move(l));
  }
  if (launches.empty()) throw Failure{"a CUDA program without kernels", false};

  // Parameters: every buffer, inputs, outputs, workspaces (the GPU code generator's ABI).
  std::vector<CUdeviceptr> ptrs(s.inputs);
  ptrs.insert(ptrs.end(), s.outputs.begin(), s.outputs.end());
  ptrs.insert(ptrs.end(), s.workspaces.begin(), s.workspaces.end());
  std::vector<void*> params;
  for (CUdeviceptr& p : ptrs) params.push_back(&p);
  auto launch = [&](int64_t times) {
    for (int64_t i = 0; i < times; ++i)
      for (const Launch& l : launches)
        CU_TRY("cuLaunchKernel", s.a->cuLaunchKernel(l.fn, l.grid[0], l.grid[1], l.grid[2],
                                                     l.block[0], l.block[1], l.block[2], l.shared,
                                                     nullptr, params.data(), nullptr));
  };
  CUevent start = nullptr, stop = nullptr;
  CU_TRY("cuEventCreate", s.a->cuEventCreate(&start, CU_EVENT_DEFAULT));
  CU_TRY("cuEventCreate", s.a->cuEventCreate(&stop, CU_EVENT_DEFAULT));
  struct Events {
    const Api* a;
    CUevent e0, e1;
    ~Events() {
      a->cuEventDestroy(e0);
      a->cuEventDestroy(e1);
    }
  } events{s.a, start, stop};
  // Seconds per call of `times` back-to-back launches.
  auto timed = [&](int64_t times) {
    CU_TRY("cuEventRecord", s.a->cuEventRecord(start, nullptr));
    launch(times);
    CU_TRY("cuEventRecord", s.a->cuEventRecord(stop, nullptr));
    CU_TRY("the kernel", s.a->cuEventSynchronize(stop));
    float ms = 0;
    CU_TRY("cuEventElapsedTime", s.a->cuEventElapsedTime(&ms, start, stop));
    return double(ms) * 1e-3 / double(times);
  };

  // Poisoned outputs, one checked call.
  for (size_t i = 0; i < s.outputs.size(); ++i)
    CU_TRY("cuMemsetD8", s.a->cuMemsetD8(s.outputs[i], 0x7f, task.output_bytes[i]));
  double kernel_seconds = 0;
  double first = timed(1);
  kernel_seconds += first;
  CU_TRY("the kernel", s.a->cuCtxSynchronize());
  for (size_t i = 0; i < s.outputs.size(); ++i) {
    std::string host(task.output_bytes[i], '\0');
    CU_TRY("cuMemcpyDtoH", s.a->cuMemcpyDtoH(host.data(), s.outputs[i], host.size()));
    if (std::string why = task.check(i, host.data()); !why.empty())
      return error("WRONG_ANSWER", "output " + std::to_string(i) + ": " + why);
  }

  double min_repeat_s = req.value("min_repeat_ms", 20.0) * 1e-3;
  double give_up_s = req.value("give_up_s", 0.0);
  double per_call = first;
  if (give_up_s > 0 && first > give_up_s) {
    per_call = std::min(first, timed(1));
    kernel_seconds += per_call;
    if (per_call > give_up_s)
      return Json{{"status", "ok"}, {"times", Json::array({per_call})}, {"calls_per_repeat", 1},
                  {"kernel_seconds", kernel_seconds}};
  }
  // Warm-up (a quarter of a repeat), which also sizes the repeats.
  int64_t warm_calls = std::clamp<int64_t>(int64_t(0.25 * min_repeat_s / std::max(per_call, 1e-7)),
                                           int64_t(req.value("warmup", 1)), 100000);
  per_call = timed(warm_calls);
  kernel_seconds += per_call * double(warm_calls);
  int64_t number = std::clamp<int64_t>(int64_t(std::ceil(min_repeat_s / std::max(per_call, 1e-9))),
                                       1, 1000000);
  bool flush = req.value("flush", true);
  Json times = Json::array();
  for (int r = 0, repeats = req.value("repeats", 3); r < repeats; ++r) {
    // Evict the operands from L2 (a memset over twice its size), outside the timed events.
    if (flush) CU_TRY("cuMemsetD8 (L2 flush)", s.a->cuMemsetD8(s.flush, uint8_t(r), s.flush_bytes));
    double t = timed(number);
    kernel_seconds += t * double(number);
    times.push_back(t);
  }
  return Json{{"status", "ok"}, {"times", std::move(times)}, {"calls_per_repeat", number},
              {"kernel_seconds", kernel_seconds}};
}

}  // namespace

Json measure_cuda(const Json& req, const CudaTaskView& task) {
  try {
    return run(req, task);
  } catch (const Failure& f) {
    return error("RUNTIME_DEVICE", f.message, f.fatal);
  }
}

#endif  // TUNER_HAVE_CUDA

}  // namespace tuner::measure
