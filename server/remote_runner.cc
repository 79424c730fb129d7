#include "server/remote_runner.h"

#include <fmt/format.h>

#include <chrono>
#include <thread>

#include "codegen/build.h"
#include "measure/artifact.h"
#include "measure/sandbox_runner.h"
#include "ops/registry.h"
#include "schedule/lower.h"
#include "schedule/state.h"
#include "db/record.h"
#include "server/wire.h"
#include "support/error.h"
#include "support/read_file.h"

namespace tuner::server {

namespace {
constexpr size_t kMaxCachedPayloads = 32;  // more than most models have tasks
constexpr size_t kMaxCachedPayloadBytes = size_t(512) << 20;
}  // namespace

RemoteRunner::RemoteRunner(Dispatcher& dispatcher, std::string job, RemoteRunnerOptions opts,
                           std::function<bool()> cancelled)
    : dispatcher_(dispatcher),
      job_(std::move(job)),
      opts_(std::move(opts)),
      cancelled_(std::move(cancelled)) {}

std::shared_ptr<const rpc::TaskPayload> RemoteRunner::payload(const measure::MeasureTask& task) {
  std::string key = task.key();
  for (auto it = tasks_.begin(); it != tasks_.end(); ++it)
    if (it->first == key) {
      tasks_.splice(tasks_.end(), tasks_, it);
      return tasks_.back().second;
    }
  auto p = std::make_shared<rpc::TaskPayload>();
  p->set_key(key);
  const te::ComputeDAG& dag = task.dag;
  std::vector<ops::HostTensor> inputs =
      task.inputs.empty() ? ops::random_inputs(dag, task.input_seed) : task.inputs;
  for (const auto& t : inputs) to_proto(t, p->add_inputs());
  for (const auto& t : dag.outputs()) {
    auto* o = p->add_outputs();
    o->set_dtype(t->dtype.str());
    for (int64_t s : t->shape) o->add_shape(s);
  }
  // The reference kernel (the untransformed schedule), cross-compiled like the candidates: the
  // worker needs no compiler.
  measure::TempDir dir("tuner-reference");
  std::string so = dir.path() + "/reference.so";
  auto build_reference = [&](const codegen::Target& target) {
    codegen::BuildOptions bo;
    bo.opt_level = 1;
    codegen::build_shared_object({schedule::lower(schedule::State(dag), "reference")}, target,
                                 so, bo);
  };
  if (task.target.is_cuda()) {
    // A CUDA worker runs cubins only: the expected outputs are computed here, by the
    // reference built for this host and run in a local sandbox.
    std::vector<ops::HostTensor> expected = task.expected;
    if (expected.empty()) {
      build_reference(codegen::Target::parse("llvm"));
      measure::TaskData td;
      td.key = key;
      td.inputs = inputs;
      for (const auto& t : dag.outputs()) td.outputs.push_back({t->dtype, t->shape});
      td.reference_so = so;
      expected = measure::SandboxRunner().expected_outputs(td);
    }
    for (const auto& t : expected) to_proto(t, p->add_expected());
  } else {
    build_reference(task.target);
    p->set_reference_so(read_file_bytes(so, kMaxArtifactBytes));
  }
  p->set_reference_sha256(sha256_hex(p->reference_so()));
  USER_CHECK(p->ByteSizeLong() < size_t(kMaxMessageBytes) / 2)
      << "the inputs of workload " << dag.hash_hex() << " are too large to send to a worker";
  tasks_.emplace_back(key, p);
  size_t bytes = 0;
  for (const auto& [k, t] : tasks_) bytes += t->ByteSizeLong();
  while (tasks_.size() > 1 && (tasks_.size() > kMaxCachedPayloads || bytes > kMaxCachedPayloadBytes)) {
    bytes -= tasks_.front().second->ByteSizeLong();
    tasks_.pop_front();
  }
  return p;
}

std::string RemoteRunner::wait_for_workers(const std::vector<std::string>& targets) {
  INTERNAL_CHECK(!targets.empty()) << "no target to wait for";
  auto start = std::chrono::steady_clock::now();
  bool told = false;
  while (true) {
    for (const auto& t : targets)
      if (dispatcher_.alive_workers(t) > 0) {
        if (told && waiting_) waiting_("");
        return t;
      }
    if (!told && waiting_) {  // a job that shows "running 0/N" and nothing else looks hung
      waiting_(fmt::format("waiting up to {:g} s for a worker of target '{}'",
                           opts_.wait_for_workers_s, targets[0]));
      told = true;
    }
    if (cancelled_ && cancelled_()) throw JobCancelled();
    double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    USER_CHECK(waited < opts_.wait_for_workers_s)
        << "no worker serves target '" << targets[0] << "'"
        << (targets.size() > 1 ? " (nor an emulated one)" : "") << " (waited "
        << opts_.wait_for_workers_s << " s); start one on a machine of that target: tuner-worker "
        << "--server " << opts_.server_address << " --target='" << targets[0]
        << "' --token-file WORKER_TOKEN_FILE";
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

std::vector<measure::MeasureResult> RemoteRunner::run(
    const measure::MeasureTask& task, const std::vector<measure::BuiltCandidate>& cands) {
  const std::string target = task.target.str();
  wait_for_workers({target});
  auto task_payload = payload(task);
  std::vector<measure::MeasureResult> results(cands.size());
  std::vector<Work> batch;
  std::vector<int> slot(cands.size(), -1);  // candidate -> index in batch
  std::map<std::string, int> by_path;       // same shared object: measured once
  for (size_t i = 0; i < cands.size(); ++i) {
    const auto& c = cands[i];
    if (!c.ok()) {
      results[i] = measure::make_error(c.status, c.error);
      continue;
    }
    if (auto it = by_path.find(c.so_path + "|" + c.symbol); it != by_path.end()) {
      slot[i] = it->second;
      continue;
    }
    Work w;
    w.job = job_;
    w.target = target;
    std::string bytes;
    try {
      bytes = read_file_bytes(c.so_path, kMaxArtifactBytes);
    } catch (const UserError& e) {
      results[i] = measure::make_error(db::MeasureStatus::CompileHost, e.what());
      continue;
    }
    w.candidate = sha256_hex(bytes);
    w.artifact = std::make_shared<const std::string>(std::move(bytes));
    w.symbol = c.symbol;
    w.gpu = c.gpu;
    w.timeout_s = opts_.kernel_timeout_s;
    w.task = task_payload;
    slot[i] = int(batch.size());
    by_path[c.so_path + "|" + c.symbol] = int(batch.size());
    batch.push_back(std::move(w));
  }
  // A full queue (other jobs) is not this job's failure: wait for room.
  std::vector<std::shared_future<measure::MeasureResult>> futures;
  while (true) {
    try {
      futures = dispatcher_.submit(batch);
      break;
    } catch (const QueueFull&) {
      if (cancelled_ && cancelled_()) throw JobCancelled();
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }
  auto no_worker_since = std::chrono::steady_clock::now();
  for (auto& f : futures) {
    while (f.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
      if (cancelled_ && cancelled_()) {
        dispatcher_.cancel_job(job_);
        throw JobCancelled();
      }
      auto now = std::chrono::steady_clock::now();
      if (dispatcher_.alive_workers(target) > 0) {
        no_worker_since = now;
      } else if (std::chrono::duration<double>(now - no_worker_since).count() >
                 opts_.wait_for_workers_s) {
        dispatcher_.cancel_job(job_);
        USER_ERROR() << "every worker of target '" << target << "' is gone (waited "
                     << opts_.wait_for_workers_s << " s for one); start one: tuner-worker --server "
                     << opts_.server_address << " --target='" << target
                     << "' --token-file WORKER_TOKEN_FILE";
      }
    }
  }
  // Cancelling finishes the job's items with "cancelled": never let those become records.
  if (cancelled_ && cancelled_()) throw JobCancelled();
  // A worker could not measure this task at all: the job fails with its reason, unrecorded.
  if (auto e = dispatcher_.take_job_error(job_)) USER_ERROR() << *e;
  const double flops = task.dag.flops();
  for (size_t i = 0; i < cands.size(); ++i) {
    if (slot[i] < 0) continue;
    results[i] = futures[size_t(slot[i])].get();
    results[i].build_seconds = cands[i].build_seconds;
    // Faster than any device: a broken timer or a forged report, which would rank first.
    if (std::string why = db::times_problem(results[i].status, results[i].times, flops);
        !why.empty())
      results[i] = measure::make_error(db::MeasureStatus::Unknown, "the worker reported " + why);
  }
  return results;
}

}  // namespace tuner::server
