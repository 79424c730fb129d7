#include "server/server.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <grpc/support/log.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/version_info.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "codegen/target.h"
#include "compile/record_lookup.h"
#include "db/jsonl.h"

#include "server/wire.h"
#include "support/address_space.h"
#include "support/error.h"
#include "support/escape.h"
#include "support/log.h"
#include "tuner.grpc.pb.h"

namespace tuner::server {

namespace {

// A status message quoting a client's strings stays short: gRPC refuses metadata over 16 KiB,
// and the client would see RESOURCE_EXHAUSTED instead of the error (a 10 MB job name, say).
std::string short_message(std::string m) {
  constexpr size_t kMax = 2000;
  if (m.size() > kMax) m = m.substr(0, kMax) + fmt::format("... ({} bytes in all)", m.size());
  return escape_controls(m);
}

grpc::Status user_error(const std::exception& e) {
  return {grpc::StatusCode::INVALID_ARGUMENT, short_message(e.what())};
}

// A client's id or name inside a message, quoted and cut short.
std::string quoted(const std::string& s) {
  constexpr size_t kMax = 200;
  return "'" + escape_controls(s.size() > kMax ? s.substr(0, kMax) + "..." : s) + "'";
}

// Every WorkerService call of an unknown or lost worker id: the worker registers again.
grpc::Status unknown_worker() {
  return {grpc::StatusCode::NOT_FOUND, "unknown or lost worker: register again"};
}

constexpr size_t kMaxImportBytes = size_t(1) << 30;

// A streambuf sending what is written as RecordLines messages of about 256 KiB, cut at line
// ends, so an export never holds the whole database in memory.
class ChunkWriter : public std::streambuf {
 public:
  explicit ChunkWriter(grpc::ServerWriter<rpc::RecordLines>* out) : out_(out) {}
  ~ChunkWriter() override { sync(); }
  bool ok() const { return ok_; }

 protected:
  int_type overflow(int_type c) override {
    if (c == traits_type::eof()) return c;
    buf_ += char(c);
    if (c == '\n' && buf_.size() >= (256u << 10)) send();
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    for (std::streamsize i = 0; i < n; ++i) overflow(traits_type::to_int_type(s[i]));
    return n;
  }
  int sync() override {
    if (!buf_.empty()) send();
    return ok_ ? 0 : -1;
  }

 private:
  void send() {
    rpc::RecordLines m;
    m.set_lines(std::move(buf_));
    buf_.clear();
    if (ok_) ok_ = out_->Write(m);
  }
  grpc::ServerWriter<rpc::RecordLines>* out_;
  std::string buf_;
  bool ok_ = true;
};

class WorkerServiceImpl final : public rpc::WorkerService::Service {
 public:
  WorkerServiceImpl(const Tokens& t, Dispatcher& d) : tokens_(t), d_(d) {}

  grpc::Status Register(grpc::ServerContext* ctx, const rpc::RegisterRequest* req,
                        rpc::RegisterReply* rep) override {
    if (auto s = check_token(*ctx, tokens_, Role::Worker); !s.ok()) return s;
    codegen::Target t;
    try {
      t = codegen::Target::parse(req->target());
      t.check_builds_kernels();  // no job could ever use this worker
    } catch (const UserError& e) {
      return user_error(e);
    }
    // Shown in listings and logs: a name, not a payload.
    for (const std::string* f : {&req->device_key(), &req->hardware(), &req->version()})
      if (f->size() > 1024)
        return {grpc::StatusCode::INVALID_ARGUMENT,
                fmt::format("a worker's device key, hardware and version are limited to 1024 "
                            "bytes (got {})", f->size())};
    // An emulated worker's results go under the emulated identity, never the board's.
    if (req->emulated()) t = t.with_emulator("qemu");
    if (!t.emulated()) {
      std::vector<std::string> lacks(req->cpu_lacks().begin(), req->cpu_lacks().end());
      if (auto needs = t.enabled_features(lacks); !needs.empty())
        return {grpc::StatusCode::INVALID_ARGUMENT,
                fmt::format("target {} uses {}, which this board's CPU lacks; give the worker "
                            "its own CPU (--target 'llvm -mcpu=NAME')",
                            t.str(), fmt::join(needs, ", "))};
    }
    rep->set_worker_id(d_.register_worker(t.str(), req->device_key(), req->hardware(),
                                          req->version(), t.emulated()));
    rep->set_heartbeat_interval_s(std::max(0.05, d_.options().heartbeat_timeout_s / 5));
    return grpc::Status::OK;
  }
  grpc::Status Heartbeat(grpc::ServerContext* ctx, const rpc::HeartbeatRequest* req,
                         rpc::HeartbeatReply*) override {
    if (auto s = check_token(*ctx, tokens_, Role::Worker); !s.ok()) return s;
    if (!d_.heartbeat(req->worker_id())) return unknown_worker();
    return grpc::Status::OK;
  }
  grpc::Status PullWork(grpc::ServerContext* ctx, const rpc::PullRequest* req,
                        rpc::PullReply* rep) override {
    if (auto s = check_token(*ctx, tokens_, Role::Worker); !s.ok()) return s;
    // Never hold the call past the client's deadline.
    double wait = req->wait_s();
    auto left = std::chrono::duration<double>(ctx->deadline() - std::chrono::system_clock::now());
    wait = std::min(wait, left.count() - 0.5);
    auto leases = d_.pull(req->worker_id(), std::max(1, req->max_leases()), wait);
    if (!leases) return unknown_worker();
    for (auto& l : *leases) *rep->add_leases() = std::move(l);
    return grpc::Status::OK;
  }
  grpc::Status ReportResult(grpc::ServerContext* ctx, const rpc::ReportRequest* req,
                            rpc::ReportReply* rep) override {
    if (auto s = check_token(*ctx, tokens_, Role::Worker); !s.ok()) return s;
    auto out = d_.report(req->worker_id(), req->job(), req->candidate(), req->attempt(),
                         from_proto(req->result()), req->task_missing(), req->task_error());
    if (!out.known_worker) return unknown_worker();
    rep->set_accepted(out.accepted);
    rep->set_reason(out.reason);
    return grpc::Status::OK;
  }
  grpc::Status Deregister(grpc::ServerContext* ctx, const rpc::DeregisterRequest* req,
                          rpc::DeregisterReply*) override {
    if (auto s = check_token(*ctx, tokens_, Role::Worker); !s.ok()) return s;
    if (!d_.deregister(req->worker_id())) return unknown_worker();
    return grpc::Status::OK;
  }

 private:
  const Tokens& tokens_;
  Dispatcher& d_;
};

class TuningServiceImpl final : public rpc::TuningService::Service {
 public:
  TuningServiceImpl(const Tokens& t, Dispatcher& d, JobManager& j) : tokens_(t), d_(d), jobs_(j) {}

  grpc::Status Submit(grpc::ServerContext* ctx, const rpc::SubmitRequest* req,
                      rpc::SubmitReply* rep) override {
    if (auto s = check_token(*ctx, tokens_, Role::Client); !s.ok()) return s;
    try {
      rep->set_job(jobs_.submit(*req));
    } catch (const TooManyJobs& e) {
      return {grpc::StatusCode::RESOURCE_EXHAUSTED, e.what()};
    } catch (const UserError& e) {
      return user_error(e);
    }
    return grpc::Status::OK;
  }
  grpc::Status Watch(grpc::ServerContext* ctx, const rpc::WatchRequest* req,
                     grpc::ServerWriter<rpc::JobInfo>* out) override {
    if (auto s = check_token(*ctx, tokens_, Role::Client); !s.ok()) return s;
    uint64_t version = 0;
    bool changed = true;
    while (!ctx->IsCancelled()) {
      auto info = jobs_.info(req->job());
      if (!info) return {grpc::StatusCode::NOT_FOUND, "no job " + quoted(req->job())};
      if (changed && !out->Write(*info)) break;
      if (job_ended(*info)) break;
      // Wakes at least every second to notice a client that went away.
      changed = jobs_.wait_change(req->job(), &version, 1.0);
    }
    return grpc::Status::OK;
  }
  grpc::Status Cancel(grpc::ServerContext* ctx, const rpc::CancelRequest* req,
                      rpc::CancelReply*) override {
    if (auto s = check_token(*ctx, tokens_, Role::Client); !s.ok()) return s;
    if (!jobs_.cancel(req->job())) return {grpc::StatusCode::NOT_FOUND, "no job " + quoted(req->job())};
    return grpc::Status::OK;
  }
  grpc::Status List(grpc::ServerContext* ctx, const rpc::ListJobsRequest*,
                    rpc::ListJobsReply* rep) override {
    if (auto s = check_token(*ctx, tokens_, Role::Client); !s.ok()) return s;
    for (auto& j : jobs_.list()) *rep->add_jobs() = std::move(j);
    return grpc::Status::OK;
  }
  grpc::Status ListWorkers(grpc::ServerContext* ctx, const rpc::ListWorkersRequest*,
                           rpc::ListWorkersReply* rep) override {
    if (auto s = check_token(*ctx, tokens_, Role::Client); !s.ok()) return s;
    for (const auto& w : d_.workers()) {
      auto* o = rep->add_workers();
      o->set_worker_id(w.id);
      o->set_target(w.target);
      o->set_device_key(w.device_key);
      o->set_state(w.state);
      o->set_seconds_since_heartbeat(w.seconds_since_heartbeat);
      o->set_measurements(w.measurements);
      o->set_leases(w.leases);
      o->set_version(w.version);
      o->set_emulated(w.emulated);
    }
    return grpc::Status::OK;
  }

 private:
  const Tokens& tokens_;
  Dispatcher& d_;
  JobManager& jobs_;
};

class DatabaseServiceImpl final : public rpc::DatabaseService::Service {
 public:
  DatabaseServiceImpl(const Tokens& t, db::Database& db) : tokens_(t), db_(db) {}

  grpc::Status Export(grpc::ServerContext* ctx, const rpc::ExportRequest* req,
                      grpc::ServerWriter<rpc::RecordLines>* out) override {
    if (auto s = check_token(*ctx, tokens_, Role::Client); !s.ok()) return s;
    try {
      db::ExportOptions eo;
      // As the local command: a unique start or another spelling, else "no target".
      if (!req->target().empty()) eo.target = compile::resolve_target(db_, req->target());
      ChunkWriter buf(out);
      std::ostream os(&buf);
      db::export_jsonl(db_, os, eo);
      os.flush();
      if (!buf.ok()) return {grpc::StatusCode::CANCELLED, "the client went away"};
    } catch (const UserError& e) {
      return user_error(e);
    }
    return grpc::Status::OK;
  }
  grpc::Status Import(grpc::ServerContext* ctx, grpc::ServerReader<rpc::RecordLines>* in,
                      rpc::ImportReply* rep) override {
    if (auto s = check_token(*ctx, tokens_, Role::Client); !s.ok()) return s;
    std::string all;
    rpc::RecordLines chunk;
    while (in->Read(&chunk)) {
      all += chunk.lines();
      if (all.size() > kMaxImportBytes)
        return {grpc::StatusCode::RESOURCE_EXHAUSTED, "an import is limited to 1 GiB"};
    }
    try {
      std::istringstream is(all);
      db::ImportOptions io;
      io.check = compile::importable_check();
      db::ImportReport r = db::import_jsonl(db_, is, io);
      rep->set_lines(r.lines);
      rep->set_inserted(r.inserted);
      rep->set_duplicates(r.duplicates);
      for (const auto& b : r.bad) rep->add_bad(fmt::format("{}: {}", b.line, b.reason));
    } catch (const UserError& e) {
      return user_error(e);
    }
    return grpc::Status::OK;
  }
  grpc::Status TopK(grpc::ServerContext* ctx, const rpc::TopKRequest* req,
                    rpc::TopKReply* rep) override {
    if (auto s = check_token(*ctx, tokens_, Role::Client); !s.ok()) return s;
    if (req->k() < 1)
      return {grpc::StatusCode::INVALID_ARGUMENT,
              fmt::format("k must be at least 1 (got {})", req->k())};
    try {
      // The spellings `tuner db best` takes locally: hash, prefix or op name; a target's
      // string or its start, empty for the workload's only target.
      db::Workload w = compile::resolve_workload(db_, req->workload());
      std::string target = compile::resolve_target(db_, w, req->target());
      for (const auto& r : db_.top_k(w.id, target, std::min(req->k(), 1000))) {
        auto* o = rep->add_records();
        o->set_id(r.id);
        o->set_trace(r.trace);
        o->set_median_seconds(r.median.value_or(0));
        o->set_worker(r.worker);
      }
    } catch (const UserError& e) {
      return user_error(e);
    }
    return grpc::Status::OK;
  }

 private:
  const Tokens& tokens_;
  db::Database& db_;
};

}  // namespace

namespace {

std::mutex g_grpc_log_mu;  // held briefly: g_grpc_capture and the text it points to
std::string* g_grpc_capture = nullptr;  // set while a server binds its port

// gRPC's own log lines: errors as one "grpc: ..." line of the server's log, the rest at debug
// level; while a server binds, kept for its error message instead.
void grpc_log(gpr_log_func_args* a) {
  {
    std::lock_guard lk(g_grpc_log_mu);
    if (g_grpc_capture) {
      *g_grpc_capture += a->message;
      return;
    }
  }
  tuner::log(a->severity == GPR_LOG_SEVERITY_ERROR ? LogLevel::Info : LogLevel::Debug, "grpc: {}",
             a->message);
}

// Keeps gRPC's log lines in *text while it lives (one server binds at a time: gRPC's
// lines of that moment are about it).
class CaptureGrpcLog {
 public:
  explicit CaptureGrpcLog(std::string* text) {
    g_capture_mu.lock();
    std::lock_guard lk(g_grpc_log_mu);
    g_grpc_capture = text;
  }
  ~CaptureGrpcLog() {
    {
      std::lock_guard lk(g_grpc_log_mu);
      g_grpc_capture = nullptr;
    }
    g_capture_mu.unlock();
  }
  CaptureGrpcLog(const CaptureGrpcLog&) = delete;
  CaptureGrpcLog& operator=(const CaptureGrpcLog&) = delete;

 private:
  // Held for the whole capture, so servers binding at once take turns. It cannot be the log
  // lock: BuildAndStart logs through grpc_log on the thread holding it.
  static inline std::mutex g_capture_mu;
};

// The system's reason in a gRPC error text (os_error:"Cannot assign requested address").
std::string os_error_in(const std::string& text) {
  size_t at = text.find("os_error:\"");
  if (at == std::string::npos) return "";
  at += 10;
  return text.substr(at, text.find('"', at) - at);
}

// The paths creating `p` would add (`p` and its missing ancestors), outermost first; a
// symlink, even a broken one, counts as existing.
std::vector<std::filesystem::path> missing_chain(const std::filesystem::path& p) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  auto abs = std::filesystem::absolute(p, ec);
  if (ec) return out;
  for (auto q = abs; !q.empty(); q = q.parent_path()) {
    // Not found is also an error code here; anything else (no permission) stops the walk.
    if (std::filesystem::symlink_status(q, ec).type() != std::filesystem::file_type::not_found)
      break;
    out.insert(out.begin(), q);
    if (q == q.parent_path()) break;
  }
  return out;
}

}  // namespace

Server::Server(ServerOptions opts) : opts_(std::move(opts)) {
  USER_CHECK(!opts_.tokens.client.empty() && !opts_.tokens.worker.empty())
      << "the server needs a client token and a worker token";
  USER_CHECK(opts_.tokens.client != opts_.tokens.worker)
      << "the client and worker tokens must differ";
  if (opts_.jobs.jobs_dir.empty()) opts_.jobs.jobs_dir = opts_.db_path + ".jobs";
  std::vector<std::filesystem::path> created = missing_chain(opts_.db_path);
  for (auto& p : missing_chain(opts_.jobs.jobs_dir)) created.push_back(p);
  // Nothing is removed when this fails: what looked missing may be another server's now.
  open_database();
  try {
    start();
  } catch (...) {
    // A server that does not start leaves none of the files it created (the lock, still
    // held, keeps other servers off them meanwhile).
    server_.reset();
    jobs_.reset();
    dispatcher_.reset();
    db_.reset();
    std::error_code ec;
    for (auto p = created.rbegin(); p != created.rend(); ++p) std::filesystem::remove(*p, ec);
    throw;
  }
}

void Server::open_database() {
  // Two servers on one database would both resume its running jobs and measure them twice.
  // The lock is on the file itself, so every path to it (links included) finds it; SQLite's
  // own locks are fcntl locks, independent of flock. An existing file is locked before SQLite
  // opens it: a refused server had already written a WAL beside a hard link to it, which a
  // later writer through that link replayed over the database (every record lost).
  auto lock = [&] {
    lock_.fd = open(opts_.db_path.c_str(), O_RDONLY | O_CLOEXEC);
    USER_CHECK(lock_.fd >= 0) << "cannot open " << opts_.db_path << ": " << std::strerror(errno);
    USER_CHECK(flock(lock_.fd, LOCK_EX | LOCK_NB) == 0)
        << "another tuner-server uses " << opts_.db_path;
  };
  std::error_code ec;
  bool exists = std::filesystem::is_regular_file(opts_.db_path, ec);
  if (exists) lock();
  db_ = db::SqliteDatabase::open(opts_.db_path);  // checks the path, creates its folder
  if (!exists) lock();
}

void Server::start() {
  // gRPC aborts when one of its threads cannot start, or hangs in its shutdown: check first.
  check_room_for_threads("tuner-server", grpc_service_threads());
#if GRPC_CPP_VERSION_MAJOR == 1 && GRPC_CPP_VERSION_MINOR < 65  // later ones log through Abseil
  static std::once_flag grpc_log_once;
  std::call_once(grpc_log_once, [] { gpr_set_log_function(grpc_log); });
#endif
  dispatcher_ = std::make_unique<Dispatcher>(opts_.dispatch);
  opts_.jobs.runner.server_address = opts_.listen;
  jobs_ = std::make_unique<JobManager>(*db_, *dispatcher_, opts_.jobs);
  worker_ = std::make_unique<WorkerServiceImpl>(opts_.tokens, *dispatcher_);
  tuning_ = std::make_unique<TuningServiceImpl>(opts_.tokens, *dispatcher_, *jobs_);
  database_ = std::make_unique<DatabaseServiceImpl>(opts_.tokens, *db_);

  std::shared_ptr<grpc::ServerCredentials> creds = grpc::InsecureServerCredentials();
  if (!opts_.tls_cert.empty() || !opts_.tls_key.empty()) {
    USER_CHECK(!opts_.tls_cert.empty() && !opts_.tls_key.empty())
        << "TLS needs both --tls-cert and --tls-key";
    grpc::SslServerCredentialsOptions so(
        opts_.tls_client_ca.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                                    : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
    so.pem_key_cert_pairs.push_back({read_pem(opts_.tls_key), read_pem(opts_.tls_cert)});
    if (!opts_.tls_client_ca.empty()) so.pem_root_certs = read_pem(opts_.tls_client_ca);
    creds = grpc::SslServerCredentials(so);
  }
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder b;
  // No SO_REUSEPORT (gRPC's default): a second server on a port in use must fail, not share
  // the port and take clients at random.
  b.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  b.AddListeningPort(opts_.listen, creds, &port_);
  b.RegisterService(worker_.get());
  b.RegisterService(tuning_.get());
  b.RegisterService(database_.get());
  b.SetMaxReceiveMessageSize(kMaxMessageBytes);
  b.SetMaxSendMessageSize(kMaxMessageBytes);
  // Accept the CLI's keepalive pings (every 20 s while it follows a job).
  b.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 10000);
  std::string grpc_said;
  {
    CaptureGrpcLog capture(&grpc_said);
    server_ = b.BuildAndStart();
  }
  std::string why = os_error_in(grpc_said);
  USER_CHECK(server_ && port_ > 0) << "cannot listen on " << opts_.listen << " ("
                                   << (why.empty() ? "address in use or invalid?" : why) << ")";
  std::string addr = opts_.listen.substr(0, opts_.listen.rfind(':'));
  jobs_->set_server_address(fmt::format("{}:{}", addr, port_));
  resumed_ = jobs_->resume_all();
}

Server::~Server() {
  shutdown();
  jobs_.reset();  // jobs stop before the dispatcher and the database go
  dispatcher_.reset();
}

Server::Fd::~Fd() {
  if (fd >= 0) close(fd);
}

void Server::wait() { server_->Wait(); }

void Server::shutdown() {
  if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
}

}  // namespace tuner::server
