#include "worker/worker.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "measure/artifact.h"
#include "runtime/cpu_features.h"
#include "server/auth.h"
#include "server/wire.h"
#include "support/error.h"
#include "support/log.h"

namespace tuner::worker {

namespace {

using server::from_proto;
using server::sha256_hex;
using server::to_proto;

void sleep_s(double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }

bool transient(const grpc::Status& s) {
  return s.error_code() == grpc::StatusCode::UNAVAILABLE ||
         s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ||
         s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED ||
         s.error_code() == grpc::StatusCode::INTERNAL ||
         s.error_code() == grpc::StatusCode::UNKNOWN ||
         s.error_code() == grpc::StatusCode::CANCELLED;
}

std::string hostname() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

std::string hardware() {
  return fmt::format("{} cores", std::thread::hardware_concurrency());
}

}  // namespace

Worker::Worker(WorkerOptions opts) : opts_(std::move(opts)) {
  // The server parses and canonicalizes the target (the worker has no compiler): "llvm" means
  // the server's host CPU, so a board unlike the server passes its full target string.
  USER_CHECK(!opts_.target.empty()) << "--target is required";
  USER_CHECK(opts_.max_parallel >= 1) << "--max-parallel must be at least 1";
  USER_CHECK(!opts_.token.empty()) << "the worker needs a token (--token-file)";
  measure::check_runner_options(opts_.runner);  // now, not on the measuring threads
  if (opts_.device_key.empty()) opts_.device_key = hostname();
  // The child that runs the target's kernels here; for another architecture an emulated one,
  // or one error line saying what is missing.
  std::string arch = measure::target_arch(opts_.target);
  if (!arch.empty() && opts_.runner.launcher.command.empty())
    opts_.runner.launcher = measure::launcher_for_arch(arch, "kernels for " + opts_.target);
  USER_CHECK(emulated() || opts_.target.find("-emulator=") == std::string::npos)
      << "this " << measure::host_arch() << " machine runs " << arch
      << " kernels natively: drop -emulator from --target";
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(server::kMaxMessageBytes);
  args.SetMaxSendMessageSize(server::kMaxMessageBytes);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, int(opts_.initial_backoff_s * 1000));
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, int(opts_.initial_backoff_s * 1000));
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, int(opts_.max_backoff_s * 1000));
  std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials();
  if (!opts_.tls_ca.empty()) {
    grpc::SslCredentialsOptions so;
    so.pem_root_certs = server::read_pem(opts_.tls_ca);
    creds = grpc::SslCredentials(so);
  }
  server::quiet_grpc_log();
  channel_ = grpc::CreateCustomChannel(opts_.server, creds, args);
  stub_ = rpc::WorkerService::NewStub(channel_);
  dir_ = std::make_shared<measure::TempDir>("tuner-worker");
}

Worker::~Worker() = default;

std::unique_ptr<grpc::ClientContext> Worker::context(double timeout_s) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  server::add_token(*ctx, opts_.token);
  ctx->set_deadline(std::chrono::system_clock::now() +
                    std::chrono::milliseconds(int64_t(timeout_s * 1000)));
  return ctx;
}

void Worker::backoff(double* delay) {
  // Sleep in small steps so stop() is honoured quickly.
  for (double t = 0; t < *delay && !stop_; t += 0.05) sleep_s(0.05);
  *delay = std::min(*delay * 2, opts_.max_backoff_s);
}

void Worker::fatal_if_refused(const grpc::Status& s) {
  if (s.error_code() != grpc::StatusCode::UNAUTHENTICATED &&
      s.error_code() != grpc::StatusCode::PERMISSION_DENIED &&
      s.error_code() != grpc::StatusCode::INVALID_ARGUMENT)
    return;
  std::lock_guard lk(mu_);
  fatal_ = fmt::format("the server at {} refused the worker: {}", opts_.server, s.error_message());
  stop_ = true;
}

std::string Worker::worker_id() {
  double delay = opts_.initial_backoff_s;
  std::lock_guard registering(register_mu_);
  while (!stop_) {
    {
      std::lock_guard lk(mu_);
      if (!reg_.id.empty()) return reg_.id;
    }
    rpc::RegisterRequest req;
    req.set_target(opts_.target);
    req.set_device_key(opts_.device_key);
    req.set_hardware(hardware());
    req.set_version(TUNER_VERSION_STRING);
    req.set_max_parallel(opts_.max_parallel);
    req.set_emulated(emulated());
    if (!emulated())
      for (const std::string& f : runtime::host_lacks_cpu_features(runtime::checkable_cpu_features()))
        req.add_cpu_lacks(f);
    rpc::RegisterReply rep;
    auto ctx = context(5);
    grpc::Status s = stub_->Register(ctx.get(), req, &rep);
    if (s.ok()) {
      std::lock_guard lk(mu_);
      if (reg_.id.empty()) {  // another slot may have registered meanwhile
        reg_ = {rep.worker_id(), rep.heartbeat_interval_s()};
        tasks_.clear();  // the server sends task data again to a new registration
        tuner::log(LogLevel::Info, "registered with {} as {} (target {}{})", opts_.server,
                   reg_.id, opts_.target,
                   emulated() ? ", emulated under " + opts_.runner.launcher.device +
                                    ": timings are not performance figures"
                              : "");
      }
      continue;
    }
    fatal_if_refused(s);
    if (stop_) break;
    tuner::log(LogLevel::Info, "cannot reach {}: {}; retrying in {:.1f} s", opts_.server,
               s.error_message(), delay);
    backoff(&delay);
  }
  return "";
}

void Worker::forget(const std::string& id) {
  std::lock_guard lk(mu_);
  if (reg_.id == id) reg_.id.clear();
}

void Worker::heartbeat_loop() {
  while (!stop_) {
    std::string id;
    double every;
    {
      std::lock_guard lk(mu_);
      id = reg_.id;
      every = reg_.heartbeat_s;
    }
    if (!id.empty()) {
      rpc::HeartbeatRequest req;
      req.set_worker_id(id);
      rpc::HeartbeatReply rep;
      auto ctx = context(std::max(1.0, every * 2));
      grpc::Status s = stub_->Heartbeat(ctx.get(), req, &rep);
      if (s.error_code() == grpc::StatusCode::NOT_FOUND) forget(id);
      fatal_if_refused(s);
    }
    for (double t = 0; t < every && !stop_; t += 0.05) sleep_s(std::min(0.05, every));
  }
}

std::shared_ptr<const measure::TaskData> Worker::task_of(const rpc::Lease& lease,
                                                         std::string* error) {
  std::lock_guard lk(mu_);
  if (auto it = tasks_.find(lease.task_key()); it != tasks_.end()) {
    if (std::filesystem::exists(it->second->reference_so)) return it->second;
    tasks_.erase(it);  // its folder was deleted: the lease's data, or task_missing, renews it
  }
  if (!lease.has_task()) {
    *error = "the lease's task data was never received";
    return nullptr;
  }
  const rpc::TaskPayload& p = lease.task();
  if (p.reference_so().size() > server::kMaxArtifactBytes ||
      sha256_hex(p.reference_so()) != p.reference_sha256()) {
    *error = "the reference kernel's digest does not match (refused to load it)";
    return nullptr;
  }
  // The reference file goes with the last user of the task's data.
  std::shared_ptr<measure::TaskData> t(new measure::TaskData, [](measure::TaskData* d) {
    unlink(d->reference_so.c_str());
    delete d;
  });
  t->key = p.key();
  try {
    for (const auto& in : p.inputs()) t->inputs.push_back(from_proto(in));
    for (const auto& e : p.expected()) t->expected.push_back(from_proto(e));
    for (const auto& o : p.outputs())
      t->outputs.push_back({te::DataType::parse(o.dtype()),
                            std::vector<int64_t>(o.shape().begin(), o.shape().end())});
  } catch (const UserError& e) {
    *error = std::string("bad task data: ") + e.what();
    return nullptr;
  }
  t->reference_so = write_file(fmt::format("reference-{}.so", ++next_file_), p.reference_so());
  // A bound on memory; a lease of a dropped task is reported task_missing and comes back with
  // the data.
  if (tasks_.size() >= 32) tasks_.erase(tasks_.begin());
  tasks_[t->key] = t;
  return t;
}

std::string Worker::write_file(const std::string& name, const std::string& bytes) {
  dir_->ensure_exists();  // a /tmp cleaner may have deleted it
  std::string path = dir_->path() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  out.close();
  HOST_CHECK(out) << "cannot write " << path << ": " << std::strerror(errno);
  return path;
}

void Worker::measure(const std::string& id, measure::SandboxRunner& runner, const rpc::Lease& lease) {
  measure::MeasureResult r;
  std::string error, task_error;
  auto task = task_of(lease, &error);
  bool task_missing = !task && !lease.has_task();
  if (!task) {
    r = measure::make_error(db::MeasureStatus::Unknown, error);
  } else if (lease.artifact().size() > server::kMaxArtifactBytes ||
             sha256_hex(lease.artifact()) != lease.candidate()) {
    r = measure::make_error(db::MeasureStatus::Unknown,
                            "the artifact's digest does not match (refused to load it)");
  } else {
    std::string name;
    {
      std::lock_guard lk(mu_);
      name = fmt::format("cand-{}.so", ++next_file_);
    }
    std::string path = write_file(name, lease.artifact());
    try {
      if (lease.timeout_s() > 0) runner.set_timeout_s(lease.timeout_s());
      auto cand = measure::BuiltCandidate::from_file(path, lease.symbol());
      if (lease.has_gpu()) cand.gpu = from_proto(lease.gpu());
      r = runner.run(*task, {cand})[0];
    } catch (const measure::TaskError& e) {
      // This task's failure here, not the candidate's nor every task's: its job fails with
      // it and the worker serves others (it exited, and one over-large job took every
      // worker of its target, and their other jobs, with it).
      task_error = fmt::format("worker {} cannot measure it (--memory-limit-mb {}): {}", id,
                               opts_.runner.memory_limit_mb, e.what());
    } catch (const HostError&) {
      unlink(path.c_str());
      throw;  // this machine's failure, not the candidate's: the worker stops (slot_loop)
    } catch (const UserError& e) {
      r = measure::make_error(db::MeasureStatus::Unknown, e.what());
    }
    unlink(path.c_str());
  }
  rpc::ReportRequest req;
  req.set_worker_id(id);
  req.set_job(lease.job());
  req.set_candidate(lease.candidate());
  req.set_attempt(lease.attempt());
  *req.mutable_result() = to_proto(r);
  req.set_task_missing(task_missing);
  req.set_task_error(task_error);
  // Retried while the server is unreachable; reports are idempotent, so a retry of one that
  // did arrive adds nothing.
  double delay = opts_.initial_backoff_s;
  auto give_up = std::chrono::steady_clock::now() +
                 std::chrono::milliseconds(int64_t(lease.deadline_s() * 1000));
  while (!stop_ && std::chrono::steady_clock::now() < give_up) {
    rpc::ReportReply rep;
    auto ctx = context(10);
    grpc::Status s = stub_->ReportResult(ctx.get(), req, &rep);
    if (s.ok()) {
      if (rep.accepted()) ++reported_;
      else tuner::log(LogLevel::Debug, "report not accepted: {}", rep.reason());
      return;
    }
    // Declared lost meanwhile: the lease went to another worker; register again.
    if (s.error_code() == grpc::StatusCode::NOT_FOUND) {
      forget(id);
      return;
    }
    fatal_if_refused(s);
    if (!transient(s)) return;
    backoff(&delay);
  }
}

void Worker::slot_loop(int slot) {
  // An error here (the child cannot start, ...) ends the worker with it, not std::terminate.
  try {
    pull_loop();
  } catch (const std::exception& e) {
    std::lock_guard lk(mu_);
    if (fatal_.empty()) fatal_ = e.what();
    stop_ = true;
  }
}

void Worker::pull_loop() {
  measure::SandboxRunner runner(opts_.runner);
  double delay = opts_.initial_backoff_s;
  while (!stop_) {
    std::string id = worker_id();
    if (id.empty()) break;
    rpc::PullRequest req;
    req.set_worker_id(id);
    req.set_max_leases(1);
    req.set_wait_s(opts_.pull_wait_s);
    rpc::PullReply rep;
    auto ctx = context(opts_.pull_wait_s + 5);
    grpc::Status s = stub_->PullWork(ctx.get(), req, &rep);
    if (s.error_code() == grpc::StatusCode::NOT_FOUND) {
      forget(id);
      continue;
    }
    if (!s.ok()) {
      fatal_if_refused(s);
      if (stop_) break;
      tuner::log(LogLevel::Info, "pulling work from {} failed: {}; retrying in {:.1f} s",
                 opts_.server, s.error_message(), delay);
      backoff(&delay);
      continue;
    }
    delay = opts_.initial_backoff_s;
    for (const auto& lease : rep.leases()) measure(id, runner, lease);
  }
}

void Worker::run() {
  std::thread hb([this] { heartbeat_loop(); });
  std::vector<std::thread> slots;
  for (int i = 0; i < opts_.max_parallel; ++i) slots.emplace_back([this, i] { slot_loop(i); });
  for (auto& t : slots) t.join();
  stop_ = true;
  hb.join();
  std::string id;
  {
    std::lock_guard lk(mu_);
    id = reg_.id;
  }
  if (!id.empty()) {
    rpc::DeregisterRequest req;
    req.set_worker_id(id);
    rpc::DeregisterReply rep;
    auto ctx = context(2);
    stub_->Deregister(ctx.get(), req, &rep);
  }
  USER_CHECK(fatal_.empty()) << fatal_;
}

}  // namespace tuner::worker
