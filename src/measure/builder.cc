#include "measure/builder.h"

#include <fmt/format.h>

#include <chrono>
#include <map>
#include <fstream>
#include <new>
#include <thread>

#include "codegen/gpu_build.h"
#include "codegen/nvrtc.h"
#include "schedule/schedule.h"
#include "support/error.h"
#include "support/hash.h"

namespace tuner::measure {

namespace {

using db::MeasureStatus;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// What a job reports; written by the job's thread, read only when it finished in time.
struct StepResult {
  MeasureStatus status = MeasureStatus::Unknown;
  std::string error;
  double seconds = 0;
  schedule::LoweredFunc func;  // lowering step only
  uint64_t hash = 0;           // lowering step only
  std::optional<codegen::GpuSource> gpu_source;  // CUDA lowering step
  std::optional<GpuProgram> gpu;                  // CUDA compile step
  bool host_error = false;  // a HostError: rethrown by build(), not recorded
};

// NVRTC on a prepared CUDA candidate: the cubin written to `file`, its launches returned.
GpuProgram compile_cuda(const codegen::GpuSource& src, const codegen::Target& target,
                        const std::string& name, const std::string& file) {
  codegen::GpuBuild gb = codegen::compile_gpu_kernel(src, target, name);
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(gb.cubin.data(), std::streamsize(gb.cubin.size()));
  out.close();
  HOST_CHECK(out) << "cannot write " << file << ": " << std::strerror(errno);
  GpuProgram prog;
  for (const codegen::GpuKernel& k : gb.kernels) {
    GpuLaunch l;
    l.entry = k.entry;
    for (size_t d = 0; d < 3; ++d) {
      l.grid[d] = uint32_t(k.grid[d]);
      l.block[d] = uint32_t(k.block[d]);
    }
    l.shared_bytes = uint32_t(k.dynamic_shared_bytes);
    prog.kernels.push_back(std::move(l));
  }
  for (const codegen::GpuParam& p : gb.params)
    if (p.role == codegen::GpuParam::Workspace) prog.workspace_bytes.push_back(p.bytes());
  return prog;
}

// Runs `f`, turning every exception into the status the measure contract gives it.
template <class F>
void run_step(StepResult& r, F&& f) {
  auto t0 = std::chrono::steady_clock::now();
  try {
    f();
    r.status = MeasureStatus::Ok;
  } catch (const schedule::ScheduleError& e) {
    r.status = MeasureStatus::Instantiation;
    r.error = e.what();
  } catch (const codegen::NvrtcError& e) {
    r.status = MeasureStatus::CompileDevice;
    r.error = e.what();
  } catch (const HostError& e) {
    r.host_error = true;  // the machine's, not the candidate's: build() throws it
    r.status = MeasureStatus::Unknown;
    r.error = e.what();
  } catch (const UserError& e) {
    r.status = MeasureStatus::CompileHost;
    r.error = e.what();
  } catch (const InternalError& e) {
    r.status = MeasureStatus::CompileHost;
    r.error = e.what();
  } catch (const std::bad_alloc&) {
    r.status = MeasureStatus::CompileHost;
    r.error = "out of memory while building";
  } catch (const std::exception& e) {
    r.status = MeasureStatus::Unknown;
    r.error = e.what();
  }
  r.seconds = seconds_since(t0);
}

// A step that failed for the machine's sake (a full disk) fails the whole batch with it.
void throw_host_error(const std::vector<std::shared_ptr<StepResult>>& steps,
                      const std::vector<bool>& in_time, const std::vector<size_t>& job_of) {
  for (size_t j = 0; j < job_of.size(); ++j)
    if (in_time[j] && steps[job_of[j]]->host_error) throw HostError(steps[job_of[j]]->error);
}

// Time the process spent stopped while a step ran is not build time (the pool measured it).
void deduct_stopped(const std::vector<std::shared_ptr<StepResult>>& steps,
                    const std::vector<bool>& in_time, const std::vector<size_t>& job_of,
                    const std::vector<double>& stopped) {
  for (size_t j = 0; j < job_of.size(); ++j)
    if (in_time[j])
      steps[job_of[j]]->seconds = std::max(0.0, steps[job_of[j]]->seconds - stopped[j]);
}

}  // namespace

Builder::Builder(BuilderOptions opts)
    : opts_(std::move(opts)),
      dir_(std::make_shared<TempDir>("tuner-build")),
      pool_(opts_.threads > 0 ? opts_.threads
                              : int(std::max(1u, std::thread::hardware_concurrency()))) {}

std::vector<BuiltCandidate> Builder::build(const te::ComputeDAG& dag,
                                           const std::vector<schedule::Trace>& traces,
                                           const codegen::Target& target,
                                           const std::function<bool()>& stop) {
  std::vector<BuildInput> batch;
  batch.reserve(traces.size());
  for (const auto& t : traces) batch.push_back({dag, t, target});
  return build(batch, stop);
}

std::vector<BuiltCandidate> Builder::build(const std::vector<BuildInput>& batch_in,
                                           const std::function<bool()>& stop_in) {
  size_t n = batch_in.size();
  std::vector<BuiltCandidate> out(n);
  dir_->ensure_exists();
  // Jobs may outlive this call (abandoned on timeout): they share the inputs and their slot.
  auto batch = std::make_shared<const std::vector<BuildInput>>(batch_in);
  auto opts = std::make_shared<const BuilderOptions>(opts_);
  // A build not started when `stop` turns true is skipped (a cancelled job, a stopping
  // server): a round of 256 conv candidates took minutes to build to the end.
  auto stop = std::make_shared<const std::function<bool()>>(stop_in);
  auto skip = [stop](StepResult& r) {
    if (!*stop || !(*stop)()) return false;
    r.status = MeasureStatus::Unknown;
    r.error = "not built: the run was stopped";
    return true;
  };

  // Step 1: replay and lower every candidate (INSTANTIATION errors come from here), in
  // parallel; a CUDA candidate is also verified and printed as CUDA C, which identifies it.
  std::vector<std::shared_ptr<StepResult>> lowered(n);
  std::vector<std::function<void()>> jobs;
  std::vector<double> timeouts;
  std::vector<size_t> job_of;
  std::vector<std::shared_ptr<const Artifact>> artifact(n);
  for (size_t i = 0; i < n; ++i) {
    lowered[i] = std::make_shared<StepResult>();
    jobs.push_back([batch, opts, skip, i, r = lowered[i]] {
      if (skip(*r)) return;
      const BuildInput& in = (*batch)[i];
      run_step(*r, [&] {
        auto sched = schedule::Schedule::replay(in.dag, in.trace);
        if (in.target.is_cuda()) {
          r->gpu_source = codegen::prepare_gpu_kernel(sched.state(), in.target, opts->kernel_name);
          r->hash = fnv1a64(in.target.str(), fnv1a64(r->gpu_source->source));
        } else {
          r->func = schedule::lower(sched.state(), opts->kernel_name, opts->lower);
          r->hash = fnv1a64(in.target.str(), fnv1a64(r->func.str()));
        }
      });
    });
    timeouts.push_back(opts_.timeout_s);
    job_of.push_back(i);
  }
  std::vector<double> stopped;
  std::vector<bool> in_time = pool_.run(std::move(jobs), timeouts, &stopped);
  throw_host_error(lowered, in_time, job_of);
  deduct_stopped(lowered, in_time, job_of, stopped);
  for (size_t j = 0; j < job_of.size(); ++j) {
    if (in_time[j]) continue;
    size_t i = job_of[j];
    lowered[i] = std::make_shared<StepResult>();  // the abandoned job keeps the old slot
    lowered[i]->status = MeasureStatus::BuildTimeout;
    lowered[i]->error = fmt::format("lowering took longer than {:g} s", opts_.timeout_s);
    lowered[i]->seconds = opts_.timeout_s;
  }

  // Step 2: codegen + link (CUDA: NVRTC) each distinct program once (same loop IR or CUDA
  // source, same target).
  std::map<uint64_t, size_t> leader_of_hash;
  std::vector<int> leader(n, -1);
  std::vector<std::shared_ptr<StepResult>> built(n);
  jobs.clear();
  timeouts.clear();
  job_of.clear();
  for (size_t i = 0; i < n; ++i) {
    if (lowered[i]->status != MeasureStatus::Ok) continue;
    auto [it, fresh] = leader_of_hash.emplace(lowered[i]->hash, i);
    leader[i] = int(it->second);
    if (!fresh) continue;
    built[i] = std::make_shared<StepResult>();
    bool cuda = lowered[i]->gpu_source.has_value();
    artifact[i] = std::make_shared<const Artifact>(
        dir_, fmt::format("{}/k{}.{}", dir_->path(), next_file_++, cuda ? "cubin" : "so"));
    jobs.push_back([batch, opts, skip, i, r = built[i], lo = lowered[i], file = artifact[i]] {
      if (skip(*r)) return;
      const codegen::Target& target = (*batch)[i].target;
      run_step(*r, [&] {
        if (lo->gpu_source) r->gpu = compile_cuda(*lo->gpu_source, target, opts->kernel_name, file->path());
        else codegen::build_shared_object({lo->func}, target, file->path(), opts->build);
      });
    });
    timeouts.push_back(std::max(1e-3, opts_.timeout_s - lowered[i]->seconds));
    job_of.push_back(i);
  }
  in_time = pool_.run(std::move(jobs), timeouts, &stopped);
  throw_host_error(built, in_time, job_of);
  deduct_stopped(built, in_time, job_of, stopped);
  for (size_t j = 0; j < job_of.size(); ++j) {
    if (in_time[j]) continue;
    size_t i = job_of[j];
    built[i] = std::make_shared<StepResult>();
    built[i]->status = MeasureStatus::BuildTimeout;
    built[i]->error = fmt::format("{} took longer than {:g} s",
                                  lowered[i]->gpu_source ? "NVRTC" : "code generation", opts_.timeout_s);
    built[i]->seconds = std::max(0.0, opts_.timeout_s - lowered[i]->seconds);
  }

  for (size_t i = 0; i < n; ++i) {
    BuiltCandidate& c = out[i];
    const StepResult& lo = *lowered[i];
    c.build_seconds = lo.seconds;
    c.program_hash = lo.status == MeasureStatus::Ok ? lo.hash : 0;
    if (lo.status != MeasureStatus::Ok) {
      c.status = lo.status;
      c.error = lo.error;
      continue;
    }
    size_t l = size_t(leader[i]);
    const StepResult& b = *built[l];
    if (l == i) c.build_seconds += b.seconds;
    else c.duplicate_of = int(l);
    c.status = b.status;
    c.error = b.error;
    if (b.status == MeasureStatus::Ok) {
      c.artifact = artifact[l];
      c.so_path = artifact[l]->path();
      c.symbol = opts_.kernel_name;
      c.gpu = b.gpu;
    }
  }
  return out;
}

}  // namespace tuner::measure
