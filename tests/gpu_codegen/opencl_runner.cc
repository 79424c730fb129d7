#include "opencl_runner.h"

#include <cstring>
#include <stdexcept>

#ifndef TUNER_HAVE_OPENCL

namespace tuner::testing {

class OpenCLProgram {};
struct OpenCLRunner::Impl {};
OpenCLRunner::~OpenCLRunner() = default;
OpenCLRunner* OpenCLRunner::get(std::string* missing) {
  if (missing) *missing = "built without OpenCL (install ocl-icd-opencl-dev opencl-headers pocl-opencl-icd)";
  return nullptr;
}
std::shared_ptr<OpenCLProgram> OpenCLRunner::build(const std::string&, bool) { return nullptr; }
bool OpenCLRunner::has_extension(const std::string&) const { return false; }
std::vector<ops::HostTensor> OpenCLRunner::run(OpenCLProgram&, const schedule::GpuLoweredFunc&,
                                               const std::vector<ops::HostTensor>&) {
  return {};
}

}  // namespace tuner::testing

#else

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

namespace tuner::testing {

namespace {

void check(cl_int err, const char* what) {
  if (err != CL_SUCCESS) throw std::runtime_error(std::string(what) + " failed: OpenCL error " + std::to_string(err));
}

}  // namespace

class OpenCLProgram {
 public:
  cl_program prog = nullptr;
  ~OpenCLProgram() {
    if (prog) clReleaseProgram(prog);
  }
};

struct OpenCLRunner::Impl {
  cl_device_id device = nullptr;
  cl_context ctx = nullptr;
  cl_command_queue queue = nullptr;
  ~Impl() {
    if (queue) clReleaseCommandQueue(queue);
    if (ctx) clReleaseContext(ctx);
  }
};

OpenCLRunner::OpenCLRunner(std::unique_ptr<Impl> impl, std::string name)
    : impl_(std::move(impl)), name_(std::move(name)) {}
OpenCLRunner::~OpenCLRunner() = default;

OpenCLRunner* OpenCLRunner::get(std::string* missing) {
  static std::string why;
  static std::unique_ptr<OpenCLRunner> runner = [&]() -> std::unique_ptr<OpenCLRunner> {
    cl_uint n = 0;
    if (clGetPlatformIDs(0, nullptr, &n) != CL_SUCCESS || n == 0) {
      why = "no OpenCL platform (install pocl-opencl-icd)";
      return nullptr;
    }
    std::vector<cl_platform_id> plats(n);
    clGetPlatformIDs(n, plats.data(), nullptr);
    for (auto p : plats) {
      cl_device_id dev;
      cl_uint nd = 0;
      if (clGetDeviceIDs(p, CL_DEVICE_TYPE_CPU, 1, &dev, &nd) != CL_SUCCESS || nd == 0) continue;
      auto impl = std::make_unique<Impl>();
      impl->device = dev;
      cl_int err;
      impl->ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
      if (err != CL_SUCCESS) continue;
      impl->queue = clCreateCommandQueue(impl->ctx, dev, 0, &err);
      if (err != CL_SUCCESS) continue;
      char pname[256] = {0}, dname[256] = {0};
      clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof pname - 1, pname, nullptr);
      clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof dname - 1, dname, nullptr);
      return std::unique_ptr<OpenCLRunner>(
          new OpenCLRunner(std::move(impl), std::string(pname) + " / " + dname));
    }
    why = "no OpenCL CPU device (install pocl-opencl-icd)";
    return nullptr;
  }();
  if (!runner && missing) *missing = why;
  return runner.get();
}

bool OpenCLRunner::has_extension(const std::string& name) const {
  size_t n = 0;
  clGetDeviceInfo(impl_->device, CL_DEVICE_EXTENSIONS, 0, nullptr, &n);
  std::string list(n, '\0');
  clGetDeviceInfo(impl_->device, CL_DEVICE_EXTENSIONS, n, list.data(), nullptr);
  list.resize(std::strlen(list.c_str()));
  return (" " + list + " ").find(" " + name + " ") != std::string::npos;
}

std::shared_ptr<OpenCLProgram> OpenCLRunner::build(const std::string& source, bool optimize) {
  auto p = std::make_shared<OpenCLProgram>();
  const char* src = source.c_str();
  size_t len = source.size();
  cl_int err;
  p->prog = clCreateProgramWithSource(impl_->ctx, 1, &src, &len, &err);
  check(err, "clCreateProgramWithSource");
  const char* opts = optimize ? "-cl-std=CL1.2" : "-cl-std=CL1.2 -cl-opt-disable";
  err = clBuildProgram(p->prog, 1, &impl_->device, opts, nullptr, nullptr);
  if (err != CL_SUCCESS) {
    size_t n = 0;
    clGetProgramBuildInfo(p->prog, impl_->device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
    std::string log(n, '\0');
    clGetProgramBuildInfo(p->prog, impl_->device, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
    throw std::runtime_error("OpenCL build failed (" + std::to_string(err) + "):\n" + log);
  }
  return p;
}

std::vector<ops::HostTensor> OpenCLRunner::run(OpenCLProgram& program, const schedule::GpuLoweredFunc& f,
                                               const std::vector<ops::HostTensor>& inputs) {
  cl_int err;
  std::vector<cl_mem> mems;
  struct Release {
    std::vector<cl_mem>& m;
    ~Release() {
      for (auto x : m) clReleaseMemObject(x);
    }
  } release{mems};
  for (size_t i = 0; i < f.params.size(); ++i) {
    const te::Buffer& b = f.params[i];
    size_t bytes = size_t(std::max<int64_t>(1, b->num_elements() * b->dtype.bytes()));
    bool input = int(i) < f.num_inputs;
    void* host = input ? const_cast<void*>(inputs[i].raw()) : nullptr;
    mems.push_back(clCreateBuffer(impl_->ctx, input ? CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR : CL_MEM_READ_WRITE,
                                  bytes, host, &err));
    check(err, "clCreateBuffer");
  }
  for (auto& k : f.kernels) {
    cl_kernel kern = clCreateKernel(program.prog, k.name.c_str(), &err);
    check(err, ("clCreateKernel " + k.name).c_str());
    for (size_t i = 0; i < mems.size(); ++i) check(clSetKernelArg(kern, cl_uint(i), sizeof(cl_mem), &mems[i]), "clSetKernelArg");
    size_t local[3], global[3];
    for (int a = 0; a < 3; ++a) {
      local[a] = size_t(k.block[size_t(a)]);
      global[a] = size_t(k.grid[size_t(a)] * k.block[size_t(a)]);
    }
    err = clEnqueueNDRangeKernel(impl_->queue, kern, 3, nullptr, global, local, 0, nullptr, nullptr);
    clReleaseKernel(kern);
    check(err, ("clEnqueueNDRangeKernel " + k.name).c_str());
  }
  std::vector<ops::HostTensor> outs;
  for (int o = 0; o < f.num_outputs; ++o) {
    const te::Buffer& b = f.params[size_t(f.num_inputs + o)];
    outs.emplace_back(b->shape, b->dtype);
    if (outs.back().bytes())
      check(clEnqueueReadBuffer(impl_->queue, mems[size_t(f.num_inputs + o)], CL_TRUE, 0, outs.back().bytes(),
                                outs.back().raw(), 0, nullptr, nullptr),
            "clEnqueueReadBuffer");
  }
  check(clFinish(impl_->queue), "clFinish");
  return outs;
}

}  // namespace tuner::testing

#endif  // TUNER_HAVE_OPENCL
