// tuner-measure-child: the sandbox in which LocalRunner measures candidates. A persistent
// process serving requests on fd 3 (protocol in src/measure/protocol.h): it loads a task's
// inputs and expected outputs from raw files once, then for each candidate dlopens the
// shared object, checks its result, warms up and times it. A candidate that crashes or hangs
// takes only this process down; the parent sees the signal or the timeout and replaces it.
// Safety nets of its own: an address-space limit (RLIMIT_AS), an alarm per request (so an
// orphaned child cannot spin forever), and exit on end-of-file from the parent.
#include <dlfcn.h>
#include <sys/resource.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "measure/child/cuda_measure.h"
#include "measure/child/page_buffer.h"
#include "measure/protocol.h"
#include "ops/host_tensor.h"
#include "runtime/memory_plan.h"
#include "runtime/module.h"
#include "runtime/thread_pool.h"
#include "support/json.h"
#include "te/tensor.h"

namespace tuner::measure {
namespace {

using Clock = std::chrono::steady_clock;

int g_fd = protocol::kChildFd;
int64_t g_memory_limit_mb = 0;
std::atomic_flag g_dying = ATOMIC_FLAG_INIT;

// Reports "out of memory" and exits. Called from an allocation that failed, possibly on a
// kernel worker thread and with the heap exhausted: no allocation, one report at most.
[[noreturn]] void die_out_of_memory(long long bytes) {
  if (!g_dying.test_and_set()) {
    static char what[96], buf[320];
    if (bytes >= 0) std::snprintf(what, sizeof what, "allocating %lld bytes failed", bytes);
    else std::snprintf(what, sizeof what, "a C++ allocation failed");
    int n = std::snprintf(buf, sizeof buf,
                          "{\"status\":\"RUNTIME_DEVICE\",\"error\":\"out of memory: %s "
                          "(address-space limit %lld MiB)\",\"fatal\":true}",
                          what, (long long)g_memory_limit_mb);
    protocol::write_frame_raw(g_fd, buf, uint32_t(n));
    _exit(3);
  }
  for (;;) pause();  // another thread is reporting
}

// The heap of generated kernels (TunerEnv::alloc): as the runtime's, but failure is reported.
void* child_alloc(int64_t bytes) {
  void* p = nullptr;
  if (posix_memalign(&p, 64, size_t(bytes > 0 ? bytes : 64)) != 0) die_out_of_memory(bytes);
  return p;
}
void child_free(void* p) { std::free(p); }

// Evicts a buffer from every cache level (TVM's cache_flush_cpu does the same to the args).
#if defined(__x86_64__)
// clflushopt flushes lines in parallel where clflush serializes them: 12 MB of matmul
// arguments take ~4 ms instead of ~15 ms, paid before every repeat (every call when cold).
__attribute__((target("clflushopt"))) void flush_lines_opt(const char* p, size_t bytes) {
  for (size_t off = 0; off < bytes; off += 64) _mm_clflushopt(const_cast<char*>(p + off));
}

bool has_clflushopt() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 23));
}
#endif

void flush_cache(const void* data, size_t bytes) {
  const char* p = static_cast<const char*>(data);
#if defined(__x86_64__)
  static const bool opt = has_clflushopt();
  if (opt) flush_lines_opt(p, bytes);
  else
    for (size_t off = 0; off < bytes; off += 64) _mm_clflush(p + off);
  _mm_mfence();
#elif defined(__aarch64__)
  for (size_t off = 0; off < bytes; off += 64)
    asm volatile("dc civac, %0" ::"r"(p + off) : "memory");
  asm volatile("dsb ish" ::: "memory");
#else
  (void)p;
  (void)bytes;
#endif
}

struct TensorSpec {
  std::string path;
  te::DataType dtype;
  std::vector<int64_t> shape;
};

TensorSpec parse_spec(const Json& j) {
  return {j.at("path").get<std::string>(), te::DataType::parse(j.at("dtype").get<std::string>()),
          j.at("shape").get<std::vector<int64_t>>()};
}

// A kernel argument: its description and its bytes.
struct Tensor {
  TensorSpec spec;
  std::unique_ptr<PageBuffer> buf;

  explicit Tensor(TensorSpec s, size_t gap = 0)
      : spec(std::move(s)),
        buf(std::make_unique<PageBuffer>(
            size_t(te::num_elements(spec.shape)) * size_t(spec.dtype.bytes()), gap)) {}
  /// The bytes the kernel reads or writes.
  void* data() { return buf->data(); }
  size_t bytes() const { return buf->bytes(); }
  /// A copy as a HostTensor (for ops::compare).
  ops::HostTensor host() const {
    ops::HostTensor t(spec.shape, spec.dtype);
    std::memcpy(t.raw(), buf->data(), bytes());
    return t;
  }
};

// Reads a tensor's raw file into a buffer, `gap` bytes before its guard page, that is
// read-only from then on.
Tensor read_tensor(const TensorSpec& s, size_t gap = 0) {
  Tensor t(s, gap);
  std::ifstream in(s.path, std::ios::binary);
  USER_CHECK(in) << "cannot open " << s.path;
  in.read(static_cast<char*>(t.data()), std::streamsize(t.bytes()));
  USER_CHECK(in.gcount() == std::streamsize(t.bytes())) << s.path << " is too short";
  t.buf->make_read_only();
  return t;
}

void write_tensor(const Tensor& t, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(t.buf->data()), std::streamsize(t.bytes()));
  out.close();
  HOST_CHECK(out) << "cannot write " << path << ": " << std::strerror(errno);
}

// The task's own tensors do not fit the address-space limit: no candidate can run here.
struct TaskTooLarge {};

// The task data, loaded once per task id and kept for the next requests.
struct LoadedTask {
  std::string id;
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;   // written by each candidate (poisoned before)
  std::vector<Tensor> expected;  // loaded on the first "run"
};

class Server {
 public:
  Json handle(const Json& req) {
    std::string cmd = req.at("cmd").get<std::string>();
    bool reference = cmd == "reference";
    USER_CHECK(reference || cmd == "run") << "unknown command '" << cmd << "'";
    load_task(req.at("task"), !reference);
    return measure(req, reference);
  }

 private:
  // The task's tensors not fitting the memory limit fail the task, not the candidate.
  void load_task(const Json& jt, bool need_expected) {
    try {
      load_task_data(jt, need_expected);
    } catch (const std::bad_alloc&) {
      task_ = LoadedTask{};
      throw TaskTooLarge();
    }
  }

  void load_task_data(const Json& jt, bool need_expected) {
    std::string id = jt.at("id").get<std::string>();
    if (task_.id != id) {
      task_ = LoadedTask{};
      // Outputs end at their guard page; input k ends early enough to start (when its size
      // is a whole number of pages) at the runtime's k-th spread page offset, so same-sized
      // arguments start at different page offsets (runtime/memory_plan.h).
      for (const auto& j : jt.at("inputs")) {
        int64_t start = runtime::spread_page_offset(task_.inputs.size());
        task_.inputs.push_back(
            read_tensor(parse_spec(j), size_t((runtime::kPageBytes - start) % runtime::kPageBytes)));
      }
      for (const auto& j : jt.at("outputs")) task_.outputs.emplace_back(parse_spec(j));
      task_.id = id;
    }
    if (need_expected && task_.expected.empty())
      for (const auto& o : task_.outputs) task_.expected.push_back(read_tensor(o.spec));
  }

  runtime::ThreadPool& pool(int threads) {
    if (!pool_ || pool_->num_threads() != threads) {
      pool_.reset();  // join the old workers first
      pool_ = std::make_unique<runtime::ThreadPool>(threads);
    }
    return *pool_;
  }

  Json measure(const Json& req, bool reference) {
    if (req.contains("cuda")) return measure_on_gpu(req, reference);
    Json reply;
    std::string so = req.at("so").get<std::string>();
    std::string symbol = req.at("symbol").get<std::string>();
    void* handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) return error("RUNTIME_DEVICE", std::string("cannot load: ") + dlerror());
    struct Close {
      void* h;
      ~Close() { dlclose(h); }
    } close_handle{handle};
    auto fn = reinterpret_cast<TunerKernelFn>(dlsym(handle, symbol.c_str()));
    if (!fn) return error("RUNTIME_DEVICE", "kernel symbol '" + symbol + "' not found in " + so);

    TunerEnv env = pool(req.value("threads", 1)).env();
    env.alloc = child_alloc;
    env.free = child_free;
    std::vector<Tensor>& outputs = task_.outputs;
    // Poison, so a kernel that leaves elements unwritten (or accumulates into the output
    // without initialising it) fails the check.
    for (auto& t : outputs) std::memset(t.data(), 0x7f, t.bytes());
    std::vector<void*> args;
    std::vector<size_t> arg_bytes;
    for (auto* group : {&task_.inputs, &outputs})
      for (auto& t : *group) {
        args.push_back(t.data());
        arg_bytes.push_back(t.bytes());
      }

    double kernel_seconds = 0;
    auto call = [&](int64_t times, double* seconds) -> int32_t {
      auto t0 = Clock::now();
      for (int64_t i = 0; i < times; ++i) {
        int32_t rc = fn(args.data(), &env);
        if (rc != 0) return rc;
      }
      *seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      kernel_seconds += *seconds;
      return 0;
    };
    auto failed = [&](int32_t rc) {
      return error("RUNTIME_DEVICE", "the kernel " + runtime::kernel_failure(rc));
    };

    double first = 0;
    if (int32_t rc = call(1, &first)) return failed(rc);
    if (reference) {
      for (const auto& t : outputs) write_tensor(t, t.spec.path);
      reply["status"] = "ok";
      reply["kernel_seconds"] = kernel_seconds;
      return reply;
    }
    double rtol = req.value("rtol", 1e-3), atol = req.value("atol", 2e-3);
    for (size_t i = 0; i < outputs.size(); ++i)
      if (std::string m = check_output(i, outputs[i].data(), rtol, atol); !m.empty())
        return error("WRONG_ANSWER", "output " + std::to_string(i) + ": " + m);

    bool flush = req.value("flush", true), cold = req.value("cold", false);
    auto flush_args = [&] {
      for (size_t a = 0; a < args.size(); ++a) flush_cache(args[a], arg_bytes[a]);
      // Wake the pool's workers, which may have gone to sleep during a long flush: the call
      // is timed as in a model, where the previous kernel left them spinning.
      env.parallel_for(env.pool, [](int64_t, int64_t, void*) {}, nullptr, 64);
    };

    // Far slower than the best so far: one time is all its ranking needs. The first call
    // may be colder than the rest (a fresh child, first page touches), so unless it is
    // slower by far, decide on a second one.
    double min_repeat_s = req.value("min_repeat_ms", 20.0) * 1e-3;
    double give_up_s = req.value("give_up_s", 0.0);
    double per_call = first;
    if (give_up_s > 0 && first > give_up_s) {
      if (first < 10 * give_up_s) {
        if (cold) flush_args();
        if (int32_t rc = call(1, &per_call)) return failed(rc);
        per_call = std::min(per_call, first);
      }
      if (per_call > give_up_s) {
        reply["status"] = "ok";
        reply["times"] = Json::array({per_call});
        reply["calls_per_repeat"] = 1;
        reply["kernel_seconds"] = kernel_seconds;
        return reply;
      }
    }

    // Warm-up: at least `warmup` calls and a quarter of a repeat (doubling batches), which
    // also sizes the repeats: calls per repeat so that one lasts >= min_repeat_ms. A kernel
    // slower than a repeat is warm after its first call: no more warm-up for it.
    int64_t warmup = per_call >= min_repeat_s ? 0 : req.value("warmup", int64_t(1));
    if (warmup > 0) {
      int64_t calls = 0;
      double spent = 0;
      for (int64_t batch = warmup;; batch = calls) {
        double s = 0;
        if (int32_t rc = call(batch, &s)) return failed(rc);
        calls += batch;
        spent += s;
        if (spent >= 0.25 * min_repeat_s) break;
      }
      per_call = spent / double(calls);
    }
    int64_t number =
        std::clamp<int64_t>(int64_t(std::ceil(min_repeat_s / std::max(per_call, 1e-9))), 1,
                            100000000);
    // Cold calls: every call starts with its arguments out of the caches, as a kernel does
    // in a model (the previous kernel wrote its input on both cores; its weights were last
    // read a whole inference ago). Only the calls are timed.
    if (cold) number = std::min<int64_t>(number, protocol::kColdCallsPerRepeat);
    int64_t batch = cold ? 1 : number;  // calls timed between two flushes
    Json times = Json::array();
    for (int r = 0, repeats = req.value("repeats", 3); r < repeats; ++r) {
      double s = 0;
      for (int64_t done = 0; done < number; done += batch) {
        if (flush || cold) flush_args();
        double t = 0;
        if (int32_t rc = call(batch, &t)) return failed(rc);
        s += t;
      }
      times.push_back(s / double(number));
    }
    reply["status"] = "ok";
    reply["times"] = std::move(times);
    reply["calls_per_repeat"] = number;
    reply["kernel_seconds"] = kernel_seconds;
    return reply;
  }

  // A CUDA kernel: the same task data, run on the GPU (child/cuda_measure.cc).
  Json measure_on_gpu(const Json& req, bool reference) {
    if (reference)
      return error("UNKNOWN", "a CUDA task's expected outputs must be given, not computed here");
    CudaTaskView view;
    view.id = task_.id;
    for (const Tensor& t : task_.inputs) view.inputs.emplace_back(t.buf->data(), t.bytes());
    for (const Tensor& t : task_.outputs) view.output_bytes.push_back(t.bytes());
    double rtol = req.value("rtol", 1e-3), atol = req.value("atol", 2e-3);
    view.check = [&](size_t i, const void* bytes) { return check_output(i, bytes, rtol, atol); };
    return measure_cuda(req, view);
  }

  // Output i against the expected values: "" when close enough, else the first mismatch. The
  // copies ops::compare needs are made only to describe a mismatch (or for other dtypes).
  std::string check_output(size_t i, const void* got, double rtol, double atol) {
    const Tensor& want = task_.expected[i];
    if (want.spec.dtype == te::DataType::f32() &&
        ops::all_close(static_cast<const float*>(got), static_cast<const float*>(want.buf->data()),
                       te::num_elements(want.spec.shape), rtol, atol))
      return "";
    ops::HostTensor actual(want.spec.shape, want.spec.dtype);
    std::memcpy(actual.raw(), got, want.bytes());
    auto cmp = ops::compare(actual, want.host(), rtol, atol);
    return cmp.ok ? "" : cmp.message;
  }

  static Json error(const std::string& status, const std::string& message) {
    Json j;
    j["status"] = status;
    j["error"] = message;
    return j;
  }

  LoadedTask task_;
  std::unique_ptr<runtime::ThreadPool> pool_;
};

int serve() {
  Server server;
  std::string msg;
  for (;;) {
    // No time limit while idle: the parent closing its end (or dying) ends the child.
    if (protocol::read_frame(g_fd, &msg, -1) != protocol::ReadStatus::Ok) return 0;
    // Acknowledge first: a child that dies after this died of the request, not before it.
    if (!protocol::write_frame(g_fd, "{\"ack\":true}")) return 0;
    Json reply;
    try {
      Json req = Json::parse(msg);
      // If the parent has died and cannot kill us, do not spin forever on a hung kernel.
      double timeout_s = req.value("timeout_s", 60.0);
      alarm(unsigned(std::ceil(timeout_s)) + 2);
      reply = server.handle(req);
    } catch (const TaskTooLarge&) {
      reply = Json{{"status", "UNKNOWN"},
                   {"error", "its inputs, outputs and reference outputs do not fit the measurement "
                             "child's address-space limit of " +
                                std::to_string(g_memory_limit_mb) + " MiB"},
                   {"task_error", true}};
    } catch (const HostError& e) {  // this machine's failure (a full disk): the runner's to raise
      reply = Json{{"status", "UNKNOWN"}, {"error", e.what()}, {"host_error", true}};
    } catch (const std::exception& e) {
      reply = Json{{"status", "UNKNOWN"}, {"error", std::string("measurement child: ") + e.what()}};
    }
    alarm(0);
    if (!protocol::write_frame(g_fd, reply.dump())) return 0;
    // A fatal error left this process unusable (e.g. a CUDA context after an illegal address):
    // exit, and the runner starts a fresh child.
    if (reply.value("fatal", false)) return 0;
  }
}

}  // namespace
}  // namespace tuner::measure

int main(int argc, char** argv) {
  using namespace tuner::measure;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--fd") g_fd = std::atoi(argv[i + 1]);
    else if (k == "--memory-limit-mb") g_memory_limit_mb = std::atoll(argv[i + 1]);
  }
#if !defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer reserves terabytes of address space: no RLIMIT_AS under it.
  if (g_memory_limit_mb > 0) {
    rlim_t lim = rlim_t(g_memory_limit_mb) << 20;
    rlimit rl{lim, lim};
    setrlimit(RLIMIT_AS, &rl);
  }
#endif
  // `new` failing anywhere (the child's own buffers, a C++ kernel) is reported the same way.
  std::set_new_handler([] { die_out_of_memory(-1); });
  std::string hello = tuner::Json{{"ready", true}, {"pid", int(getpid())}}.dump();
  if (!protocol::write_frame(g_fd, hello)) return 1;
  return serve();
}
