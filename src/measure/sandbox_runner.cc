#include "measure/sandbox_runner.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "support/error.h"
#include "support/thread_count.h"

namespace tuner::measure {

namespace {

using db::MeasureStatus;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

Json tensor_spec(const std::string& path, te::DataType dtype, const std::vector<int64_t>& shape) {
  return Json{{"path", path}, {"dtype", dtype.str()}, {"shape", shape}};
}

void write_raw(const ops::HostTensor& t, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(t.raw()), std::streamsize(t.bytes()));
  out.close();  // a small write fails only when flushed
  HOST_CHECK(out) << "cannot write " << path << ": " << std::strerror(errno);
}

ops::HostTensor read_raw(const std::string& path, te::DataType dtype,
                         const std::vector<int64_t>& shape) {
  ops::HostTensor t(shape, dtype);
  std::ifstream in(path, std::ios::binary);
  in.read(static_cast<char*>(t.raw()), std::streamsize(t.bytes()));
  USER_CHECK(in.gcount() == std::streamsize(t.bytes())) << "cannot read " << path;
  return t;
}

}  // namespace

std::vector<ops::HostTensor> SandboxRunner::expected_outputs(const TaskData& task) {
  std::lock_guard lk(mu_);
  const PreparedTask& pt = prepare(task);
  std::vector<ops::HostTensor> out;
  for (size_t i = 0; i < task.outputs.size(); ++i)
    out.push_back(read_raw(pt.spec["outputs"][i]["path"].get<std::string>(),
                           task.outputs[i].dtype, task.outputs[i].shape));
  return out;
}

void check_runner_options(const LocalRunnerOptions& o) {
  USER_CHECK(o.repeats >= 1) << "measurement repeats must be at least 1";
  check_thread_count(o.threads, "measurement threads");
  USER_CHECK(o.timeout_s > 0) << "the run timeout must be positive";
  USER_CHECK(o.memory_limit_mb >= 0) << "the memory limit must not be negative (0: none)";
  USER_CHECK(o.min_repeat_ms >= 0 && o.min_repeat_ms <= 60e3)
      << "the minimum repeat time must be between 0 and 60000 ms";
}

SandboxRunner::SandboxRunner(LocalRunnerOptions opts)
    : opts_(std::move(opts)),
      launcher_(opts_.launcher),
      root_(std::make_shared<TempDir>("tuner-measure")) {
  check_runner_options(opts_);
  // The native child; its architecture is the caller's to check (LocalRunner knows targets).
  if (launcher_.command.empty())
    launcher_.command = {opts_.child_path.empty() ? locate_measure_child() : opts_.child_path};
}

SandboxRunner::~SandboxRunner() { child_.reset(); }

void SandboxRunner::ensure_child() {
  if (child_ && child_->alive()) return;
  child_.reset();  // reaps a dead one
  std::vector<std::string> args(launcher_.command.begin() + 1, launcher_.command.end());
  args.insert(args.end(), {"--fd", std::to_string(protocol::kChildFd), "--memory-limit-mb",
                           std::to_string(opts_.memory_limit_mb)});
  // An emulator prints its own report of a crashing guest: the runner reports it already.
  child_ = std::make_unique<ChildProcess>(launcher_.command[0], args, /*start_timeout_s=*/10,
                                          /*quiet=*/launcher_.emulated);
  ++children_started_;
  if (launcher_.emulated) {
    // The emulator ignores the guest's own RLIMIT_AS: limit the emulator's process (it has
    // not run a request yet). No core files of crashing guests in the working directory.
    if (opts_.memory_limit_mb > 0) {
      rlim_t lim = rlim_t(opts_.memory_limit_mb + launcher_.overhead_mb) << 20;
      rlimit rl{lim, lim};
      prlimit(child_->pid(), RLIMIT_AS, &rl, nullptr);
    }
    rlimit no_core{0, 0};
    prlimit(child_->pid(), RLIMIT_CORE, &no_core, nullptr);
  }
}

MeasureResult SandboxRunner::request(const Json& req, double timeout_s) {
  // A SIGKILL from outside (the system's OOM killer, a user) may be another process's doing:
  // once more on a fresh child before it becomes the candidate's RUNTIME_DEVICE for good.
  auto t0 = std::chrono::steady_clock::now();
  bool killed = false;
  MeasureResult r = request_once(req, timeout_s, &killed);
  if (killed) {
    r = request_once(req, timeout_s, &killed);
    r.run_seconds = seconds_since(t0);
  }
  return r;
}

MeasureResult SandboxRunner::request_once(const Json& req, double timeout_s, bool* killed) {
  *killed = false;
  auto t0 = std::chrono::steady_clock::now();
  const std::string msg = req.dump();
  std::string text;
  // Send, then wait for the acknowledgement. A child found dead before acknowledging died
  // before the request (killed while idle): not the candidate's fault, retry on a fresh one.
  protocol::ReadStatus st = protocol::ReadStatus::Error;
  for (int attempt = 0; attempt < 2; ++attempt) {
    ensure_child();
    st = child_->send(msg) ? child_->receive(&text, timeout_s) : protocol::ReadStatus::Eof;
    if (st == protocol::ReadStatus::Ok || st == protocol::ReadStatus::Timeout) break;
    child_.reset();
  }
  auto acked = std::chrono::steady_clock::now();
  if (st == protocol::ReadStatus::Ok)
    st = child_->receive(&text, std::max(0.0, timeout_s - seconds_since(t0)));
  else if (st != protocol::ReadStatus::Timeout)
    return make_error(MeasureStatus::Unknown, "the measurement child does not take requests");
  MeasureResult r;
  bool host_error = false, task_error = false;
  if (st == protocol::ReadStatus::Timeout) {
    child_->kill_and_reap();
    child_.reset();
    r = make_error(MeasureStatus::RunTimeout,
                   fmt::format("no result within {:.3g} s (child killed)", timeout_s));
    // The kernel was running until the kill (loading and checking take milliseconds).
    r.kernel_seconds = seconds_since(acked);
  } else if (st != protocol::ReadStatus::Ok) {
    // The child died mid-request: the candidate crashed it (or the OS killed it).
    int status = child_->reap(1.0);
    child_.reset();
    std::string how = describe_exit(status);
    MeasureStatus s = MeasureStatus::RuntimeDevice;
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
      how += ": possibly out of memory (killed by the system)";
      *killed = true;
    } else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
      s = MeasureStatus::RunTimeout;  // the child's own alarm fired first
    r = make_error(s, "the kernel crashed the measurement child: " + how);
  } else {
    Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) {
      r = make_error(MeasureStatus::Unknown, "malformed reply from the measurement child");
    } else {
      auto status = db::parse_status(j.value("status", std::string("UNKNOWN")));
      r.status = status ? *status : MeasureStatus::Unknown;
      r.error = j.value("error", std::string());
      if (auto it = j.find("times"); it != j.end() && it->is_array())
        for (const auto& t : *it) r.times.push_back(t.is_number() ? t.get<double>() : 0.0);
      r.calls_per_repeat = j.value("calls_per_repeat", int64_t(0));
      r.kernel_seconds = j.value("kernel_seconds", 0.0);
      host_error = j.value("host_error", false);
      task_error = j.value("task_error", false);
    }
    if (j.is_object() && j.value("fatal", false)) {
      child_->reap(1.0);  // it exits right after the reply
      child_.reset();
    } else if (!r.ok()) {
      // A kernel that misbehaved may have scribbled over the child's memory: do not let it
      // affect the next candidate's result.
      child_.reset();
    }
  }
  r.run_seconds = seconds_since(t0);
  HOST_CHECK(!host_error) << r.error;  // the child could not write its files: not the kernel's
  if (task_error) throw TaskError(r.error);
  return r;
}

void SandboxRunner::forget_if_deleted(const std::string& key) {
  if (auto it = tasks_.find(key); it != tasks_.end() && !std::filesystem::exists(it->second.dir))
    tasks_.erase(it);
}

bool SandboxRunner::has_task(const std::string& key) {
  std::lock_guard lk(mu_);
  forget_if_deleted(key);  // its caller then gives the whole task again
  return tasks_.count(key) != 0;
}

SandboxRunner::PreparedTask& SandboxRunner::prepare(const TaskData& task) {
  forget_if_deleted(task.key);
  if (auto it = tasks_.find(task.key); it != tasks_.end()) {
    it->second.last_used = ++use_counter_;
    return it->second;
  }
  while (!tasks_.empty() && tasks_.size() >= std::max<size_t>(1, opts_.max_cached_tasks)) {
    auto oldest = tasks_.begin();
    for (auto it = tasks_.begin(); it != tasks_.end(); ++it)
      if (it->second.last_used < oldest->second.last_used) oldest = it;
    std::error_code ec;
    std::filesystem::remove_all(oldest->second.dir, ec);
    tasks_.erase(oldest);
  }

  std::string dir = fmt::format("{}/task{}", root_->path(), ++use_counter_);
  root_->ensure_exists();
  HOST_CHECK(mkdir(dir.c_str(), 0700) == 0) << "cannot create " << dir << ": " << std::strerror(errno);
  struct RemoveOnError {
    std::string dir;
    bool armed = true;
    ~RemoveOnError() {
      std::error_code ec;
      if (armed) std::filesystem::remove_all(dir, ec);
    }
  } guard{dir};

  // Inputs, written once as raw files the child loads.
  Json spec{{"id", dir}, {"inputs", Json::array()}, {"outputs", Json::array()}};
  double mb = 0;
  for (size_t i = 0; i < task.inputs.size(); ++i) {
    const auto& t = task.inputs[i];
    std::string path = fmt::format("{}/in{}.bin", dir, i);
    write_raw(t, path);
    spec["inputs"].push_back(tensor_spec(path, t.dtype, t.shape));
    mb += double(t.bytes()) / 1e6;
  }
  for (size_t i = 0; i < task.outputs.size(); ++i) {
    const auto& o = task.outputs[i];
    spec["outputs"].push_back(
        tensor_spec(fmt::format("{}/expected{}.bin", dir, i), o.dtype, o.shape));
    int64_t n = 1;
    for (int64_t d : o.shape) n *= d;
    mb += double(n * o.dtype.bytes()) / 1e6;
  }

  if (!task.expected.empty()) {
    // Given by the caller (e.g. the op's naive reference computed on this host).
    USER_CHECK(task.expected.size() == task.outputs.size())
        << "the task has " << task.expected.size() << " expected outputs and "
        << task.outputs.size() << " outputs";
    for (size_t i = 0; i < task.expected.size(); ++i) {
      USER_CHECK(task.expected[i].shape == task.outputs[i].shape &&
                 task.expected[i].dtype == task.outputs[i].dtype)
          << "expected output " << i << " of task " << task.key << " has the wrong type or shape";
      write_raw(task.expected[i], spec["outputs"][i]["path"].get<std::string>());
    }
  } else {
    Json req{{"cmd", "reference"},           {"task", spec},
             {"so", task.reference_so},      {"symbol", task.reference_symbol},
             {"threads", opts_.threads},     {"timeout_s", opts_.reference_timeout_s}};
    MeasureResult r = request(req, opts_.reference_timeout_s);
    // This machine's failure (a memory limit too low for the task, a reference too slow for
    // it), not a candidate's: recorded against each one, it barred good schedules for good.
    if (!r.ok())
      throw TaskError(
          fmt::format("cannot compute the reference outputs of task {}: {}", task.key, r.str()));
  }

  guard.armed = false;
  PreparedTask& pt = tasks_[task.key];
  // Reading, poisoning, comparing: generously 5 ms per MB of inputs and outputs.
  pt.load_seconds = 0.25 + 5e-3 * mb;
  pt.arg_mb = mb;
  pt.dir = dir;
  pt.spec = std::move(spec);
  pt.last_used = use_counter_;
  return pt;
}

MeasureResult SandboxRunner::measure_one(PreparedTask& pt, const BuiltCandidate& c) {
  Json req{{"cmd", "run"},
           {"task", pt.spec},
           {"so", c.so_path},
           {"symbol", c.symbol},
           {"threads", opts_.threads},
           {"warmup", opts_.warmup},
           {"repeats", opts_.repeats},
           {"min_repeat_ms", opts_.min_repeat_ms},
           {"flush", opts_.flush_cache},
           {"cold", opts_.cold_calls},
           {"rtol", opts_.rtol},
           {"atol", opts_.atol}};
  if (c.gpu) {
    Json kernels = Json::array();
    for (const GpuLaunch& k : c.gpu->kernels)
      kernels.push_back({{"entry", k.entry},
                         {"grid", k.grid},
                         {"block", k.block},
                         {"shared_bytes", k.shared_bytes}});
    req["cuda"] = {{"cubin", c.so_path},
                   {"kernels", std::move(kernels)},
                   {"workspaces", c.gpu->workspace_bytes},
                   {"device", opts_.cuda_device}};
  }
  double timeout_s = opts_.timeout_s;
  bool adaptive = false;
  if (opts_.give_up_factor > 0 && std::isfinite(pt.best_seconds)) {
    // Not below one repeat: a kernel faster than that is cheap to time anyway, and a first
    // call of a microsecond kernel is noisy (cold caches, waking the pool's threads).
    double give_up_s =
        std::max(opts_.give_up_factor * pt.best_seconds, opts_.min_repeat_ms * 1e-3);
    // Every call the child goes on timing is under give_up_s, so a request lasting longer
    // than this is hopeless: kill it early. (A cold first call and a second one, warm-up
    // under a repeat, the repeats, the cache flushes between them, loading and checking.)
    int64_t flushes = opts_.cold_calls ? opts_.repeats * protocol::kColdCallsPerRepeat + 1
                                       : opts_.flush_cache ? opts_.repeats : 0;
    double bound = double(3 + opts_.repeats) * give_up_s +
                   (opts_.repeats + 0.5) * opts_.min_repeat_ms * 1e-3 + pt.load_seconds +
                   double(flushes) * protocol::kFlushSecondsPerMB * pt.arg_mb;
    req["give_up_s"] = give_up_s;
    adaptive = bound < timeout_s;
    timeout_s = std::min(timeout_s, bound);
  }
  req["timeout_s"] = timeout_s;
  MeasureResult r = request(req, timeout_s);
  if (r.status == MeasureStatus::RunTimeout && adaptive)
    r.error += fmt::format(": more than {:g}x slower than the best so far ({:.4g} ms)",
                           opts_.give_up_factor, pt.best_seconds * 1e3);
  if (r.ok()) pt.best_seconds = std::min(pt.best_seconds, r.median());
  return r;
}

std::vector<MeasureResult> SandboxRunner::run(const TaskData& task,
                                            const std::vector<BuiltCandidate>& cands) {
  std::lock_guard lk(mu_);
  return run_prepared(prepare(task), cands);
}

std::vector<MeasureResult> SandboxRunner::run_prepared(PreparedTask& pt,
                                                     const std::vector<BuiltCandidate>& cands) {
  std::vector<MeasureResult> results(cands.size());
  std::map<std::pair<std::string, std::string>, size_t> measured;  // same binary: measure once
  for (size_t i = 0; i < cands.size(); ++i) {
    const BuiltCandidate& c = cands[i];
    if (!c.ok()) {
      results[i] = make_error(c.status, c.error);
    } else if (auto it = measured.find({c.so_path, c.symbol}); it != measured.end()) {
      results[i] = results[it->second];
      results[i].run_seconds = results[i].kernel_seconds = 0;
    } else {
      results[i] = measure_one(pt, c);
      measured.emplace(std::pair{c.so_path, c.symbol}, i);
    }
    results[i].build_seconds = c.build_seconds;
  }
  return results;
}

}  // namespace tuner::measure
