#include "runtime/executor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "runtime/cpu_features.h"
#include "runtime/memory_plan.h"
#include "support/error.h"
#include "support/thread_count.h"

namespace tuner::runtime {

namespace {

// Zeroed memory starting at a page boundary, so the memory plan's page offsets hold.
void* page_alloc(int64_t bytes) {
  size_t n = size_t((std::max<int64_t>(bytes, 1) + kPageBytes - 1) / kPageBytes * kPageBytes);
  void* p = std::aligned_alloc(size_t(kPageBytes), n);
  USER_CHECK(p) << "out of memory allocating " << bytes << " bytes";
  std::memset(p, 0, n);
  return p;
}

// Loads a shared object held in memory (memfd, so no temporary file is left behind).
std::unique_ptr<Module> load_from_memory(const std::string& so) {
  int fd = memfd_create("tuner-kernels", MFD_CLOEXEC);
  USER_CHECK(fd >= 0) << "memfd_create failed: " << std::strerror(errno);
  size_t done = 0;
  while (done < so.size()) {
    ssize_t w = ::write(fd, so.data() + done, so.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      ::close(fd);
      USER_ERROR() << "cannot stage the kernels in memory: " << std::strerror(errno);
    }
    done += size_t(w);
  }
  // The module keeps the fd open: were it closed, the next artifact's memfd could get the
  // same number, and dlopen of the same /proc/self/fd/N path would return this object —
  // a second model in the process would run the first one's kernels.
  return std::make_unique<Module>("/proc/self/fd/" + std::to_string(fd), fd,
                                  "the artifact's kernel library");
}

// The architecture of an "llvm -mtriple=ARCH-..." target string; empty when it names none.
std::string target_arch(const std::string& target) {
  size_t at = target.find("-mtriple=");
  if (at == std::string::npos) return "";
  at += 9;
  return target.substr(at, target.find_first_of("- ", at) - at);
}

#if defined(__x86_64__)
constexpr const char* kHostArch = "x86_64";
#elif defined(__aarch64__)
constexpr const char* kHostArch = "aarch64";
#else
constexpr const char* kHostArch = "";
#endif

}  // namespace

Executor::Executor(Artifact a, int num_threads) : art_(std::move(a)) {
  const Plan& p = art_.plan;
  // Another machine's code: dlopen would only say "cannot open shared object file".
  std::string arch = target_arch(p.target);
  USER_CHECK(arch.empty() || !*kHostArch || arch == kHostArch)
      << "the model was compiled for " << arch << " (" << p.target << "), which this " << kHostArch
      << " machine cannot run";
  if (auto lacks = host_lacks_cpu_features(p.cpu_features); !lacks.empty())
    USER_ERROR() << "the model was compiled for " << p.target << " (needs "
                 << fmt::format("{}", fmt::join(lacks, ", ")) << "), which this CPU lacks";
  module_ = load_from_memory(art_.shared_object);
  pool_ = std::make_unique<ThreadPool>(num_threads > 0 ? num_threads : default_num_threads());
  env_ = pool_->env();
  // Owned as they are made: a constructor that throws later frees them (57 MB per failed
  // load of resnet18 leaked before).
  void* arena = owned_.emplace_back(page_alloc(p.arena_bytes)).get();
  void* weights = owned_.emplace_back(page_alloc(int64_t(art_.weights.size()))).get();
  std::memcpy(weights, art_.weights.data(), art_.weights.size());
  size_t io = 0;  // model inputs and outputs placed so far
  for (const BufferDesc& b : p.buffers) {
    switch (b.storage) {
      case Storage::Weight:
        USER_CHECK(b.offset + b.bytes <= int64_t(art_.weights.size()))
            << "buffer '" << b.name << "' lies outside the weights";
        ptrs_.push_back(static_cast<char*>(weights) + b.offset);
        break;
      case Storage::Arena:
        USER_CHECK(b.offset + b.bytes <= p.arena_bytes)
            << "buffer '" << b.name << "' lies outside the arena";
        ptrs_.push_back(static_cast<char*>(arena) + b.offset);
        break;
      default: {
        // Inputs and outputs at different page offsets (memory_plan.h).
        int64_t shift = spread_page_offset(io++);
        ptrs_.push_back(static_cast<char*>(owned_.emplace_back(page_alloc(b.bytes + shift)).get()) + shift);
      }
    }
  }
  for (const Step& s : p.steps) {
    fns_.push_back(s.kernel == "@copy" ? nullptr : module_->kernel(s.kernel));
    std::vector<void*> args;
    for (int id : s.args) args.push_back(buffer(id));
    step_args_.push_back(std::move(args));
  }
}

Executor::~Executor() = default;

const BufferDesc& Executor::input_desc(size_t i) const {
  return art_.plan.buffers.at(size_t(art_.plan.inputs.at(i)));
}

const BufferDesc& Executor::output_desc(size_t i) const {
  return art_.plan.buffers.at(size_t(art_.plan.outputs.at(i)));
}

void Executor::set_input(size_t i, const void* data, size_t bytes) {
  USER_CHECK(i < num_inputs()) << "the model has " << num_inputs() << " inputs, not " << i + 1;
  const BufferDesc& d = input_desc(i);
  USER_CHECK(int64_t(bytes) == d.bytes) << "input '" << d.name << "' takes " << d.bytes
                                        << " bytes, got " << bytes;
  std::memcpy(buffer(art_.plan.inputs[i]), data, bytes);
  check_indices(i);
}

int64_t Executor::index_limit(size_t i) const {
  int64_t limit = 0;
  for (const IndexCheck& c : art_.plan.index_checks)
    if (size_t(c.input) == i)
      for (int64_t l : c.limits) limit = limit ? std::min(limit, l) : l;
  return limit;
}

void Executor::check_indices(size_t input) const {
  for (const IndexCheck& c : art_.plan.index_checks) {
    if (size_t(c.input) != input) continue;
    const BufferDesc& d = input_desc(input);
    const void* data = buffer(art_.plan.inputs[size_t(c.input)]);
    bool wide = d.dtype == "int64";
    int64_t n = d.bytes / (wide ? 8 : 4);
    for (int64_t e = 0; e < n; ++e) {
      int64_t v = wide ? static_cast<const int64_t*>(data)[e] : static_cast<const int32_t*>(data)[e];
      int64_t limit = c.limits[size_t(e) % c.limits.size()];
      USER_CHECK(v >= -limit && v < limit)
          << "input '" << d.name << "' holds " << v << " at element " << e << ", out of range for "
          << c.op << " (indices from " << -limit << " to " << limit - 1 << ")";
    }
  }
}

void Executor::run() {
  const Plan& p = art_.plan;
  step_seconds_.assign(profile_ ? p.steps.size() : 0, 0.0);
  for (size_t k = 0; k < p.steps.size(); ++k) {
    auto t0 = std::chrono::steady_clock::now();
    if (!fns_[k]) {
      const BufferDesc& src = p.buffers[size_t(p.steps[k].args[0])];
      std::memcpy(step_args_[k][1], step_args_[k][0], size_t(src.bytes));
    } else {
      int32_t rc = fns_[k](step_args_[k].data(), &env_);
      USER_CHECK(rc == TUNER_KERNEL_OK) << "kernel " << p.steps[k].kernel << " ("
                                        << p.steps[k].label << ") " << kernel_failure(rc);
    }
    if (profile_)
      step_seconds_[k] =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
}

const void* Executor::output(size_t i) const { return buffer(art_.plan.outputs.at(i)); }

}  // namespace tuner::runtime
