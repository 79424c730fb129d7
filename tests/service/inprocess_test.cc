// An in-process server (port 0 on 127.0.0.1): token refusals, faulty candidates measured by a
// real tuner-worker process, and a job for a target no worker serves.
#include <grpcpp/generic/generic_stub.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <future>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "codegen/nvrtc.h"
#include "codegen/target.h"
#include "db/sqlite_database.h"
#include "server/remote_runner.h"
#include "server/server.h"
#include "server/wire.h"
#include "service/service_util.h"
#include "unit/db/db_test_util.h"
#include "unit/db/full_disk_vfs.h"
#include "unit/measure/measure_test_util.h"

namespace tuner::server {
namespace {

using namespace service_test;

// Follows a job's Watch stream to its end; *last is the final state. False if the stream fails.
bool watch_to_end(rpc::TuningService::Stub& tuning, const std::string& job, rpc::JobInfo* last,
                  std::vector<std::string>* messages = nullptr) {
  rpc::WatchRequest wr;
  wr.set_job(job);
  auto c = ctx(kClientToken, 60);
  auto reader = tuning.Watch(c.get(), wr);
  for (rpc::JobInfo info; reader->Read(&info);) {
    *last = info;
    if (messages) messages->push_back(info.message());
  }
  return reader->Finish().ok();
}

struct InProcess {
  Scratch scratch;
  std::unique_ptr<Server> server;
  explicit InProcess(double wait_for_workers_s = 30, int max_jobs = 8) {
    ServerOptions o;
    o.listen = "127.0.0.1:0";
    o.db_path = scratch.path("tuning.db");
    o.tokens = {kClientToken, kWorkerToken};
    o.dispatch.heartbeat_timeout_s = 2;
    o.jobs.runner.wait_for_workers_s = wait_for_workers_s;
    o.jobs.runner.kernel_timeout_s = 2;
    o.jobs.max_active_jobs = max_jobs;
    server = std::make_unique<Server>(o);
  }
  int port() const { return server->port(); }
};

TEST(ServiceAuth, RefusesMissingWrongAndCrossedTokens) {
  InProcess s;
  auto tuning = rpc::TuningService::NewStub(channel(s.port()));
  auto worker = rpc::WorkerService::NewStub(channel(s.port()));
  auto db = rpc::DatabaseService::NewStub(channel(s.port()));
  rpc::SubmitRequest sub;
  sub.mutable_op()->set_op("matmul");
  sub.mutable_op()->add_params("m=8");
  sub.set_target("llvm");
  sub.set_trials(8);
  rpc::SubmitReply srep;
  rpc::RegisterRequest reg;
  reg.set_target("llvm");
  rpc::RegisterReply rrep;

  EXPECT_EQ(tuning->Submit(ctx("").get(), sub, &srep).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(tuning->Submit(ctx("not-a-token").get(), sub, &srep).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(tuning->Submit(ctx(kWorkerToken).get(), sub, &srep).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  rpc::ListWorkersReply lw;
  EXPECT_EQ(tuning->ListWorkers(ctx(kWorkerToken).get(), {}, &lw).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  rpc::TopKRequest tk;
  rpc::TopKReply tkr;
  EXPECT_EQ(db->TopK(ctx(kWorkerToken).get(), tk, &tkr).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(worker->Register(ctx("").get(), reg, &rrep).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(worker->Register(ctx("wrong").get(), reg, &rrep).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(worker->Register(ctx(kClientToken).get(), reg, &rrep).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  rpc::PullRequest pr;
  pr.set_worker_id("w1");
  rpc::PullReply prep;
  EXPECT_EQ(worker->PullWork(ctx(kClientToken).get(), pr, &prep).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  // Nothing got through: no job, no worker.
  rpc::ListJobsReply jobs;
  ASSERT_TRUE(tuning->List(ctx(kClientToken).get(), {}, &jobs).ok());
  EXPECT_EQ(jobs.jobs_size(), 0);
  ASSERT_TRUE(tuning->ListWorkers(ctx(kClientToken).get(), {}, &lw).ok());
  EXPECT_EQ(lw.workers_size(), 0);
  // The right tokens work.
  ASSERT_TRUE(worker->Register(ctx(kWorkerToken).get(), reg, &rrep).ok());
  EXPECT_FALSE(rrep.worker_id().empty());
}

// A board whose CPU lacks a feature the target's kernels use is refused at registration,
// naming the feature; the same board with a target it can run registers.
TEST(ServiceAuth, RefusesABoardWhoseCpuLacksTheTargetsFeatures) {
  InProcess s;
  auto worker = rpc::WorkerService::NewStub(channel(s.port()));
  rpc::RegisterRequest reg;
  reg.set_target("llvm -mtriple=x86_64-pc-linux-gnu -mcpu=skylake-avx512");
  reg.add_cpu_lacks("avx512f");
  reg.add_cpu_lacks("avx512bw");
  reg.add_cpu_lacks("not-a-feature");
  rpc::RegisterRequest ok = reg;
  rpc::RegisterReply rrep;
  grpc::Status st = worker->Register(ctx(kWorkerToken).get(), reg, &rrep);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(st.error_message().find("-mcpu=skylake-avx512 uses avx512f, avx512bw, which this "
                                    "board's CPU lacks"),
            std::string::npos)
      << st.error_message();
  ok.set_target("llvm -mtriple=x86_64-pc-linux-gnu -mcpu=znver3");
  EXPECT_TRUE(worker->Register(ctx(kWorkerToken).get(), ok, &rrep).ok());
  rpc::RegisterRequest old_worker;  // sends no list: accepted as before
  old_worker.set_target(reg.target());
  EXPECT_TRUE(worker->Register(ctx(kWorkerToken).get(), old_worker, &rrep).ok());
}

// A board's name reaches `tuner workers` with its control characters escaped: a worker cannot
// write escape sequences to a user's terminal.
TEST(ServiceCli, WorkerListingEscapesControlCharacters) {
  InProcess s;
  auto worker = rpc::WorkerService::NewStub(channel(s.port()));
  rpc::RegisterRequest reg;
  reg.set_target("llvm");
  reg.set_device_key("board\x1b[2J\xc2\x9b");
  rpc::RegisterReply rrep;
  ASSERT_TRUE(worker->Register(ctx(kWorkerToken).get(), reg, &rrep).ok());
  std::string out = s.scratch.path("workers.txt");
  int code = std::system(fmt::format("{} workers --server 127.0.0.1:{} --token-file {} >{} 2>&1",
                                     TUNER_CLI_EXE, s.port(), s.scratch.client_token_file, out)
                             .c_str());
  std::string listing = read_file(out);
  EXPECT_EQ(code, 0) << listing;
  EXPECT_NE(listing.find("board\\x1b[2J\\u009b"), std::string::npos) << listing;
  EXPECT_EQ(listing.find('\x1b'), std::string::npos) << listing;
}

// Every WorkerService call of an unknown worker id, or of one that deregistered, is NOT_FOUND:
// the worker registers again (reports and deregistrations answered OK before).
TEST(ServiceAuth, UnknownWorkerIsNotFoundOnEveryCall) {
  InProcess s;
  auto worker = rpc::WorkerService::NewStub(channel(s.port()));
  auto all_not_found = [&](const std::string& id) {
    rpc::HeartbeatRequest hb;
    hb.set_worker_id(id);
    rpc::HeartbeatReply hbr;
    rpc::PullRequest pr;
    pr.set_worker_id(id);
    rpc::PullReply prr;
    rpc::ReportRequest rr;
    rr.set_worker_id(id);
    rr.set_job("1");
    rr.set_candidate("c");
    rpc::ReportReply rrr;
    rpc::DeregisterRequest dr;
    dr.set_worker_id(id);
    rpc::DeregisterReply drr;
    for (const grpc::Status& st : {worker->Heartbeat(ctx(kWorkerToken).get(), hb, &hbr),
                                   worker->PullWork(ctx(kWorkerToken).get(), pr, &prr),
                                   worker->ReportResult(ctx(kWorkerToken).get(), rr, &rrr),
                                   worker->Deregister(ctx(kWorkerToken).get(), dr, &drr)}) {
      EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND) << id << ": " << st.error_message();
      EXPECT_EQ(st.error_message(), "unknown or lost worker: register again");
    }
  };
  all_not_found("no-such-worker");
  rpc::RegisterRequest reg;
  reg.set_target("llvm");
  rpc::RegisterReply rrep;
  ASSERT_TRUE(worker->Register(ctx(kWorkerToken).get(), reg, &rrep).ok());
  rpc::DeregisterRequest dr;
  dr.set_worker_id(rrep.worker_id());
  rpc::DeregisterReply drr;
  ASSERT_TRUE(worker->Deregister(ctx(kWorkerToken).get(), dr, &drr).ok());
  all_not_found(rrep.worker_id());
}

// grpc.health.v1.Health/Check through a generic stub (no generated health code needed): an
// empty request, the reply {status: SERVING} is the bytes 08 01. No token required.
// The database service finds workloads and targets by the spellings `tuner db best` takes:
// hash prefix or op name, a target's start or nothing for the only one.
TEST(ServiceDatabase, TopKTakesPrefixesOpNamesAndTargetStarts) {
  InProcess s;
  {
    auto d = db::SqliteDatabase::open(s.scratch.path("tuning.db"));  // a second connection
    int64_t w0 = d->commit_workload(db::test::test_workload(0));
    std::vector<db::Record> round;
    for (int i = 0; i < 3; ++i) round.push_back(db::test::test_record(w0, db::test::kX86, 1e-3 * (i + 1), i));
    d->commit_round(round);
    for (int i : {1, 2}) {  // two more workloads, both named dense, no records
      db::Workload w = db::test::test_workload(i);
      w.op = "dense";
      d->commit_workload(w);
    }
  }
  auto db = rpc::DatabaseService::NewStub(channel(s.port()));
  const std::string hash = db::test::test_workload(0).hash;
  auto top = [&](const std::string& workload, const std::string& target, rpc::TopKReply* rep) {
    rpc::TopKRequest req;
    req.set_workload(workload);
    req.set_target(target);
    req.set_k(2);
    return db->TopK(ctx(kClientToken).get(), req, rep);
  };
  for (const auto& [workload, target] : std::vector<std::pair<std::string, std::string>>{
           {hash, ""}, {"matmul", ""}, {hash.substr(0, 6), "llvm"}, {hash, db::test::kX86}}) {
    rpc::TopKReply rep;
    ASSERT_TRUE(top(workload, target, &rep).ok()) << workload << " on '" << target << "'";
    ASSERT_EQ(rep.records_size(), 2);
    EXPECT_DOUBLE_EQ(rep.records(0).median_seconds(), 1e-3);
  }
  rpc::TopKReply rep;
  auto ambiguous = top("dense", "", &rep);
  EXPECT_EQ(ambiguous.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(ambiguous.error_message().find("matches 2 workloads"), std::string::npos) << ambiguous.error_message();
  auto other = top(hash, "llvm -mtriple=aarch64-linux-gnu", &rep);
  EXPECT_EQ(other.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(other.error_message().find("no target"), std::string::npos) << other.error_message();
  EXPECT_EQ(top("feedface", "", &rep).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  // k < 1 is refused (it was taken as 1).
  for (int k : {0, -3}) {
    rpc::TopKRequest req;
    req.set_workload(hash);
    req.set_k(k);
    auto st = db->TopK(ctx(kClientToken).get(), req, &rep);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << k;
    EXPECT_EQ(st.error_message(), fmt::format("k must be at least 1 (got {})", k));
  }
  // A NUL in the name or the target is shown escaped, not cutting the message short.
  auto nul = top(std::string("dense\0tail", 10), "", &rep);
  EXPECT_EQ(nul.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(nul.error_message().find("'dense\\x00tail'"), std::string::npos) << nul.error_message();
  auto nul_target = top(hash, std::string("llvm\0tail", 9), &rep);
  EXPECT_EQ(nul_target.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(nul_target.error_message().find("no target 'llvm\\x00tail' in the database"),
            std::string::npos)
      << nul_target.error_message();
}

TEST(ServiceHealth, ReportsServingWithoutAToken) {
  InProcess s;
  grpc::GenericStub stub(channel(s.port()));
  grpc::Slice empty("");
  grpc::ByteBuffer req(&empty, 1), rep;
  auto c = ctx("", 10);
  std::promise<grpc::Status> done;
  stub.UnaryCall(c.get(), "/grpc.health.v1.Health/Check", grpc::StubOptions(), &req, &rep,
                 [&](grpc::Status st) { done.set_value(st); });
  grpc::Status st = done.get_future().get();
  ASSERT_TRUE(st.ok()) << st.error_message();
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(rep.Dump(&slices).ok());
  std::string bytes;
  for (auto& sl : slices) bytes.append(reinterpret_cast<const char*>(sl.begin()), sl.size());
  EXPECT_EQ(bytes, std::string("\x08\x01", 2));
}

// Two servers on one database would both resume its running jobs: the second is refused, and
// once the first is gone the database can be served again.
TEST(ServiceHealth, OneServerPerDatabase) {
  auto first = std::make_unique<InProcess>();
  ServerOptions o;
  o.listen = "127.0.0.1:0";
  o.db_path = first->scratch.path("tuning.db");
  o.tokens = {kClientToken, kWorkerToken};
  try {
    Server second(o);
    ADD_FAILURE() << "a second server started on " << o.db_path;
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("another tuner-server uses " + o.db_path), std::string::npos)
        << e.what();
  }
  // The refused server removed nothing: the first still has its database.
  EXPECT_TRUE(std::filesystem::exists(o.db_path));
  // Through a hard link too, and SQLite never opened the file there: its WAL of an empty
  // schema, replayed by a later writer through the link, wiped every record (session 57).
  ServerOptions linked = o;
  linked.db_path = first->scratch.path("linked.db");
  std::filesystem::create_hard_link(o.db_path, linked.db_path);
  EXPECT_THROW(Server third(linked), UserError);
  EXPECT_FALSE(std::filesystem::exists(linked.db_path + "-wal"));
  EXPECT_FALSE(std::filesystem::exists(linked.db_path + "-shm"));
  auto tuning = rpc::TuningService::NewStub(channel(first->port()));
  rpc::ListJobsReply jobs;
  EXPECT_TRUE(tuning->List(ctx(kClientToken).get(), {}, &jobs).ok());
  first->server.reset();
  EXPECT_NO_THROW(Server again(o));
}

TEST(ServiceTls, WorkerAndClientOverTlsPlaintextRefused) {
  Scratch scratch;
  std::string key = scratch.path("key.pem"), cert = scratch.path("cert.pem");
  int rc = std::system(fmt::format("openssl req -x509 -newkey rsa:2048 -nodes -keyout {} -out {} "
                                   "-subj /CN=localhost -addext subjectAltName=IP:127.0.0.1 "
                                   "-days 1 >/dev/null 2>&1",
                                   key, cert)
                           .c_str());
  if (rc != 0) GTEST_SKIP() << "the openssl command cannot make a test certificate";
  ServerOptions o;
  o.listen = "127.0.0.1:0";
  o.db_path = scratch.path("tls.db");
  o.tokens = {kClientToken, kWorkerToken};
  o.tls_cert = cert;
  o.tls_key = key;
  Server srv(o);
  std::string addr = fmt::format("127.0.0.1:{}", srv.port());
  Proc w({TUNER_WORKER_EXE, "--server", addr, "--target=llvm", "--token-file",
          scratch.worker_token_file, "--tls-ca", cert, "--max-backoff", "0.5"},
         scratch.path("tls-worker.log"), scratch.tmp("tls-worker"));
  grpc::SslCredentialsOptions so;
  so.pem_root_certs = read_file(cert);
  auto tls = rpc::TuningService::NewStub(grpc::CreateChannel(addr, grpc::SslCredentials(so)));
  ASSERT_TRUE(wait_until(
      [&] {
        rpc::ListWorkersReply r;
        return tls->ListWorkers(ctx(kClientToken).get(), {}, &r).ok() && r.workers_size() == 1 &&
               r.workers(0).state() == "alive";
      },
      20))
      << read_file(scratch.path("tls-worker.log"));
  auto plain = rpc::TuningService::NewStub(channel(srv.port()));
  rpc::ListWorkersReply r;
  EXPECT_FALSE(plain->ListWorkers(ctx(kClientToken, 3).get(), {}, &r).ok());
  // The CLI over TLS.
  std::string out = scratch.path("workers.txt");
  int code = std::system(fmt::format("{} workers --server {} --token-file {} --tls-ca {} >{} 2>&1",
                                     TUNER_CLI_EXE, addr, scratch.client_token_file, cert, out)
                             .c_str());
  EXPECT_EQ(code, 0) << read_file(out);
  EXPECT_NE(read_file(out).find("alive"), std::string::npos) << read_file(out);
}

TEST(ServiceFaults, CrashingAndHangingCandidatesAreTypedAndTheWorkerStaysUp) {
  InProcess s;
  auto w = start_worker(s.scratch, s.port(), "faulty-w");
  const std::string llvm = codegen::Target::parse("llvm").str();
  ASSERT_TRUE(wait_until([&] { return s.server->dispatcher().alive_workers(llvm) == 1; }, 20))
      << read_file(s.scratch.path("faulty-w.log"));
  RemoteRunnerOptions ro;
  ro.kernel_timeout_s = 1.5;
  ro.wait_for_workers_s = 10;
  RemoteRunner runner(s.server->dispatcher(), "faults", ro);
  using measure::test::fixture;
  auto results = runner.run(measure::test::task_of(measure::test::add_dag()),
                            {fixture("segv"), fixture("hang"), fixture("good")});
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].status, db::MeasureStatus::RuntimeDevice) << results[0].str();
  EXPECT_NE(results[0].error.find("SIGSEGV"), std::string::npos) << results[0].error;
  EXPECT_EQ(results[1].status, db::MeasureStatus::RunTimeout) << results[1].str();
  EXPECT_TRUE(results[2].ok()) << results[2].str();
  // The worker process survived both and measured all three.
  EXPECT_TRUE(w->alive());
  auto ws = s.server->dispatcher().workers();
  ASSERT_EQ(ws.size(), 1u);
  EXPECT_EQ(ws[0].state, "alive");
  EXPECT_EQ(ws[0].measurements, 3);
}

// A worker measuring 4 candidates at once is one worker: each slot registered on its own,
// and 3 phantom workers were listed until they were declared lost.
TEST(ServiceFaults, AWorkerWithParallelSlotsRegistersOnce) {
  InProcess s;
  Proc w(
      {TUNER_WORKER_EXE, "--server", "127.0.0.1:" + std::to_string(s.port()), "--target=llvm",
       "--token-file", s.scratch.worker_token_file, "--max-parallel", "4", "--max-backoff", "0.5"},
      s.scratch.path("slots-w.log"), s.scratch.tmp("slots-w"));
  const std::string llvm = codegen::Target::parse("llvm").str();
  ASSERT_TRUE(wait_until([&] { return s.server->dispatcher().alive_workers(llvm) >= 1; }, 20))
      << read_file(s.scratch.path("slots-w.log"));
  std::this_thread::sleep_for(std::chrono::seconds(1));  // the other slots have asked by now
  EXPECT_EQ(s.server->dispatcher().workers().size(), 1u)
      << read_file(s.scratch.path("slots-w.log"));
}

// A worker that reports a time faster than any device (a broken timer or a forgery) gets an
// error for that candidate, not a record that would rank first for ever.
TEST(ServiceFaults, ImplausiblyFastReportsBecomeErrors) {
  Dispatcher d(DispatcherOptions{});
  const std::string llvm = codegen::Target::parse("llvm").str();
  std::string w = d.register_worker(llvm, "forger", "", "");
  std::thread forger([&] {
    for (int got = 0; got < 2;) {
      auto leases = d.pull(w, 4, 1);
      if (!leases) return;
      for (const auto& l : *leases) {
        measure::MeasureResult r;
        r.status = db::MeasureStatus::Ok;
        r.times = {got == 0 ? 1e-18 : 1e-3};
        d.report(w, l.job(), l.candidate(), l.attempt(), r);
        ++got;
      }
    }
  });
  RemoteRunner runner(d, "forged", RemoteRunnerOptions{});
  using measure::test::fixture;
  auto results = runner.run(measure::test::task_of(measure::test::add_dag()),
                            {fixture("good"), fixture("slow")});
  forger.join();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_FALSE(results[0].ok());
  EXPECT_NE(results[0].error.find("shorter than a clock cycle"), std::string::npos) << results[0].str();
  EXPECT_TRUE(results[1].ok()) << results[1].str();
}

// A job of 8 trials of a 16^3 matmul for `llvm`.
rpc::SubmitRequest small_llvm_job() {
  rpc::SubmitRequest sub;
  sub.mutable_op()->set_op("matmul");
  for (auto p : {"m=16", "n=16", "k=16"}) sub.mutable_op()->add_params(p);
  sub.set_target("llvm");
  sub.set_trials(8);
  return sub;
}

TEST(ServiceJobs, NoWorkerForTheTargetFailsNamingIt) {
  InProcess s(/*wait_for_workers_s=*/1.0);
  auto tuning = rpc::TuningService::NewStub(channel(s.port()));
  rpc::SubmitRequest sub = small_llvm_job();
  rpc::SubmitReply rep;
  ASSERT_TRUE(tuning->Submit(ctx(kClientToken).get(), sub, &rep).ok());
  rpc::JobInfo last;
  std::vector<std::string> seen;
  ASSERT_TRUE(watch_to_end(*tuning, rep.job(), &last, &seen));
  EXPECT_EQ(last.state(), "failed");
  EXPECT_NE(last.message().find("no worker serves target 'llvm"), std::string::npos)
      << last.message();
  EXPECT_NE(last.message().find("tuner-worker --server"), std::string::npos) << last.message();
  // While it waited, the job said so (it showed "running 0/8" and nothing else).
  EXPECT_TRUE(std::any_of(seen.begin(), seen.end(), [](const std::string& m) {
    return m.find("waiting up to 1 s for a worker of target 'llvm") != std::string::npos;
  })) << fmt::format("{}", fmt::join(seen, " | "));
}

// A database that cannot be written (a full disk) fails the job, naming both errors, and the
// server stays up; the job's run stays "running", to be resumed by a restarted server.
TEST(ServiceJobs, AFullDiskFailsTheJobNotTheServer) {
  db::test::FullDiskVfs vfs;
  InProcess s(/*wait_for_workers_s=*/1.0);
  auto tuning = rpc::TuningService::NewStub(channel(s.port()));
  rpc::SubmitRequest sub = small_llvm_job();
  rpc::SubmitReply rep;
  ASSERT_TRUE(tuning->Submit(ctx(kClientToken).get(), sub, &rep).ok());
  db::test::FullDiskVfs::full = true;
  rpc::JobInfo last;
  ASSERT_TRUE(watch_to_end(*tuning, rep.job(), &last));
  EXPECT_EQ(last.state(), "failed");
  EXPECT_NE(last.message().find("no worker serves target 'llvm"), std::string::npos)
      << last.message();
  EXPECT_NE(last.message().find("its end cannot be recorded: "), std::string::npos)
      << last.message();
  EXPECT_NE(last.message().find("disk is full"), std::string::npos) << last.message();
  // Still serving: a new job is refused naming the full disk.
  rpc::SubmitReply rep2;
  auto st = tuning->Submit(ctx(kClientToken).get(), sub, &rep2);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.error_message().find("disk is full"), std::string::npos) << st.error_message();
  db::test::FullDiskVfs::full = false;
  auto d = db::SqliteDatabase::open(s.scratch.path("tuning.db"));
  auto runs = d->runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].state, db::RunState::Running);
}

// A job goes to real boards of its target when any serve it, else to emulated workers, under
// the target's emulated identity (so their records stay apart).
TEST(ServiceJobs, PrefersBoardsAndFallsBackToEmulatedWorkers) {
  InProcess s;
  auto tuning = rpc::TuningService::NewStub(channel(s.port()));
  auto worker = rpc::WorkerService::NewStub(channel(s.port()));
  const char* arm = "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72";
  const std::string board = codegen::Target::parse(arm).str();
  const std::string emulated = board + " -emulator=qemu";
  std::vector<std::string> ids;  // kept alive by heartbeats while a job starts
  auto register_worker = [&](bool emu) {
    rpc::RegisterRequest reg;
    reg.set_target(arm);
    reg.set_emulated(emu);
    rpc::RegisterReply rep;
    ASSERT_TRUE(worker->Register(ctx(kWorkerToken).get(), reg, &rep).ok());
    ids.push_back(rep.worker_id());
  };
  auto heartbeat = [&] {
    for (const auto& id : ids) {
      rpc::HeartbeatRequest hb;
      hb.set_worker_id(id);
      rpc::HeartbeatReply hr;
      worker->Heartbeat(ctx(kWorkerToken).get(), hb, &hr);
    }
  };
  auto job_target = [&] {
    rpc::SubmitRequest sub;
    sub.mutable_op()->set_op("matmul");
    for (auto p : {"m=16", "n=16", "k=16"}) sub.mutable_op()->add_params(p);
    sub.set_target(arm);
    sub.set_trials(8);
    rpc::SubmitReply rep;
    EXPECT_TRUE(tuning->Submit(ctx(kClientToken).get(), sub, &rep).ok());
    // Candidates queued: the job has chosen its identity.
    EXPECT_TRUE(wait_until([&] {
      heartbeat();
      return s.server->dispatcher().queued() > 0;
    }, 30));
    auto j = job_info(*tuning, rep.job());
    rpc::CancelReply crep;
    rpc::CancelRequest cr;
    cr.set_job(rep.job());
    tuning->Cancel(ctx(kClientToken).get(), cr, &crep);
    EXPECT_TRUE(wait_until([&] { return s.server->dispatcher().queued() == 0; }, 30));
    return j ? j->target() : std::string("no job");
  };
  register_worker(true);
  auto ws = workers(*tuning);
  ASSERT_EQ(ws.size(), 1u);
  EXPECT_TRUE(ws[0].emulated());
  EXPECT_EQ(ws[0].target(), emulated);
  EXPECT_EQ(job_target(), emulated);
  register_worker(false);
  EXPECT_EQ(job_target(), board);
}

rpc::SubmitRequest small_job() {
  rpc::SubmitRequest sub;
  sub.mutable_op()->set_op("matmul");
  for (auto p : {"m=16", "n=16", "k=16"}) sub.mutable_op()->add_params(p);
  sub.set_target("llvm");
  sub.set_trials(8);
  return sub;
}

TEST(ServiceJobs, TooManyJobsIsResourceExhaustedAndCancelEndsOne) {
  InProcess s(/*wait_for_workers_s=*/30, /*max_jobs=*/1);
  auto tuning = rpc::TuningService::NewStub(channel(s.port()));
  rpc::SubmitReply first, second;
  ASSERT_TRUE(tuning->Submit(ctx(kClientToken).get(), small_job(), &first).ok());
  EXPECT_EQ(tuning->Submit(ctx(kClientToken).get(), small_job(), &second).error_code(),
            grpc::StatusCode::RESOURCE_EXHAUSTED);
  // The first waits for a worker; cancelling ends it, and then there is room again.
  rpc::CancelRequest cr;
  cr.set_job(first.job());
  rpc::CancelReply crep;
  ASSERT_TRUE(tuning->Cancel(ctx(kClientToken).get(), cr, &crep).ok());
  ASSERT_TRUE(wait_until(
      [&] {
        rpc::ListJobsReply l;
        return tuning->List(ctx(kClientToken).get(), {}, &l).ok() && l.jobs_size() == 1 &&
               l.jobs(0).state() == "cancelled";
      },
      20));
  EXPECT_TRUE(tuning->Submit(ctx(kClientToken).get(), small_job(), &second).ok());
  cr.set_job("no-such-job");
  EXPECT_EQ(tuning->Cancel(ctx(kClientToken).get(), cr, &crep).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST(ServiceJobs, BadSubmissionsAreInvalidArguments) {
  InProcess s;
  auto tuning = rpc::TuningService::NewStub(channel(s.port()));
  rpc::SubmitRequest sub;
  sub.mutable_op()->set_op("no-such-op");
  sub.set_target("llvm");
  sub.set_trials(8);
  rpc::SubmitReply rep;
  EXPECT_EQ(tuning->Submit(ctx(kClientToken).get(), sub, &rep).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  sub.mutable_op()->set_op("matmul");
  sub.set_target("no-such-target");
  EXPECT_EQ(tuning->Submit(ctx(kClientToken).get(), sub, &rep).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  // The client's strings are quoted whole, a NUL escaped (it used to cut the message short).
  auto refused = [&](const rpc::SubmitRequest& r) {
    return tuning->Submit(ctx(kClientToken).get(), r, &rep).error_message();
  };
  rpc::SubmitRequest nul = sub;
  nul.set_target(std::string("ll\0vm", 5));
  EXPECT_NE(refused(nul).find("unknown target kind 'll\\x00vm'"), std::string::npos) << refused(nul);
  nul.set_target("llvm");
  nul.mutable_op()->set_op(std::string("mat\0mul", 7));
  EXPECT_NE(refused(nul).find("unknown op 'mat\\x00mul'"), std::string::npos) << refused(nul);
  nul.mutable_op()->set_op("matmul");
  for (auto p : {"m=4", "n=4"}) nul.mutable_op()->add_params(p);
  nul.mutable_op()->add_params(std::string("k=4\0", 4));
  EXPECT_NE(refused(nul).find("'4\\x00' is not an integer"), std::string::npos) << refused(nul);
  // Parameters that parse but build no operator are refused too, not queued as a job that
  // waits for a worker and then fails.
  sub.set_target("llvm");
  for (auto params : {std::vector<std::string>{"m=abc", "n=4", "k=4"},
                      std::vector<std::string>{"m=-5", "n=4", "k=4"},
                      std::vector<std::string>{"m=4", "n=4", "k=4", "dtype=int3"}}) {
    sub.mutable_op()->clear_params();
    for (const auto& p : params) sub.mutable_op()->add_params(p);
    auto st = tuning->Submit(ctx(kClientToken).get(), sub, &rep);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << params[0];
  }
  // An op whose tensors cannot fit in memory: refused now, not when its inputs are made.
  sub.mutable_op()->clear_params();
  for (auto p : {"m=1000000", "n=1000000", "k=1000000"}) sub.mutable_op()->add_params(p);
  auto huge = tuning->Submit(ctx(kClientToken).get(), sub, &rep);
  EXPECT_EQ(huge.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(huge.error_message().find("the op's tensors need 12000.0 GB together, more than"),
            std::string::npos)
      << huge.error_message();
  // A batch no round could hold (it was sent to the search as is; session 57).
  rpc::SubmitRequest big_batch = sub;
  big_batch.mutable_op()->clear_params();
  for (auto p : {"m=4", "n=4", "k=4"}) big_batch.mutable_op()->add_params(p);
  big_batch.set_batch(1 << 30);
  auto batch_st = tuning->Submit(ctx(kClientToken).get(), big_batch, &rep);
  EXPECT_EQ(batch_st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(batch_st.error_message().find("over the limit of 4096"), std::string::npos)
      << batch_st.error_message();
  // A model that does not import: its error names the model as the client called it, never
  // the server's file.
  rpc::SubmitRequest msub;
  msub.mutable_model()->set_name("broken.onnx");
  msub.mutable_model()->set_onnx("not a model");
  msub.set_target("llvm");
  msub.set_trials(8);
  auto st = tuning->Submit(ctx(kClientToken).get(), msub, &rep);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(st.error_message().find("broken.onnx: not an ONNX model"), std::string::npos)
      << st.error_message();
  EXPECT_EQ(st.error_message().find(s.scratch.path("")), std::string::npos) << st.error_message();
  msub.mutable_model()->set_name(std::string("bro\0ken.onnx", 12));
  st = tuning->Submit(ctx(kClientToken).get(), msub, &rep);
  EXPECT_NE(st.error_message().find("bro\\x00ken.onnx: not an ONNX model"), std::string::npos)
      << st.error_message();
  rpc::ListJobsReply jobs;
  ASSERT_TRUE(tuning->List(ctx(kClientToken).get(), {}, &jobs).ok());
  EXPECT_EQ(jobs.jobs_size(), 0);
}

// A CUDA job end to end on the server, with a stand-in GPU worker speaking the protocol: the
// server builds cubins (NVRTC), leases carry their launches, and the task carries the expected
// outputs computed on the server (checked here against a host matmul); the reported times
// land as records of the CUDA target.
TEST(ServiceCuda, ServerBuildsCubinsAndSendsExpectedOutputs) {
  if (!codegen::nvrtc_available())
    GTEST_SKIP() << "skipped: built without NVRTC (" << codegen::nvrtc_version() << ")";
  InProcess s;
  auto tuning = rpc::TuningService::NewStub(channel(s.port()));
  auto worker = rpc::WorkerService::NewStub(channel(s.port()));
  rpc::RegisterRequest reg;
  reg.set_target("cuda -arch=sm_80");
  reg.set_device_key("stand-in-gpu");
  reg.set_max_parallel(4);
  rpc::RegisterReply rrep;
  ASSERT_TRUE(worker->Register(ctx(kWorkerToken).get(), reg, &rrep).ok());

  rpc::SubmitRequest sub;
  sub.mutable_op()->set_op("matmul");
  for (auto p : {"m=32", "n=32", "k=32"}) sub.mutable_op()->add_params(p);
  sub.set_target("cuda -arch=sm_80");
  sub.set_trials(6);
  sub.set_batch(6);
  rpc::SubmitReply job;
  ASSERT_TRUE(tuning->Submit(ctx(kClientToken).get(), sub, &job).ok());

  int leases = 0;
  bool checked_task = false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  // Until the job ends (duplicate programs among the candidates are measured once).
  while (std::chrono::steady_clock::now() < deadline) {
    auto info = job_info(*tuning, job.job());
    std::string st = info ? info->state() : "";
    if (st == "finished" || st == "failed" || st == "cancelled") break;
    rpc::PullRequest pr;
    pr.set_worker_id(rrep.worker_id());
    pr.set_max_leases(4);
    pr.set_wait_s(1);
    rpc::PullReply prep;
    ASSERT_TRUE(worker->PullWork(ctx(kWorkerToken, 10).get(), pr, &prep).ok());
    for (const auto& l : prep.leases()) {
      ++leases;
      ASSERT_GT(l.gpu().kernels_size(), 0);
      EXPECT_EQ(l.gpu().kernels(0).grid_size(), 3);
      EXPECT_EQ(l.artifact().substr(0, 4), "\x7f" "ELF");  // a cubin
      EXPECT_EQ(sha256_hex(l.artifact()), l.candidate());
      if (l.has_task() && !checked_task) {
        checked_task = true;
        const auto& t = l.task();
        EXPECT_TRUE(t.reference_so().empty());
        ASSERT_EQ(t.inputs_size(), 2);
        ASSERT_EQ(t.expected_size(), 1);
        auto a = from_proto(t.inputs(0)), b = from_proto(t.inputs(1));
        auto c = from_proto(t.expected(0));
        const float* A = static_cast<const float*>(a.raw());
        const float* B = static_cast<const float*>(b.raw());
        const float* C = static_cast<const float*>(c.raw());
        double max_err = 0;
        for (int i = 0; i < 32; ++i)
          for (int j = 0; j < 32; ++j) {
            double acc = 0;
            for (int k = 0; k < 32; ++k) acc += double(A[i * 32 + k]) * B[k * 32 + j];
            max_err = std::max(max_err, std::abs(acc - C[i * 32 + j]));
          }
        EXPECT_LT(max_err, 1e-3);
      }
      rpc::ReportRequest rr;
      rr.set_worker_id(rrep.worker_id());
      rr.set_job(l.job());
      rr.set_candidate(l.candidate());
      rr.set_attempt(l.attempt());
      rr.mutable_result()->set_status("ok");
      rr.mutable_result()->add_times(1e-5 * leases);
      rr.mutable_result()->set_calls_per_repeat(1);
      rpc::ReportReply rep;
      ASSERT_TRUE(worker->ReportResult(ctx(kWorkerToken).get(), rr, &rep).ok());
    }
  }
  EXPECT_TRUE(checked_task);
  EXPECT_GT(leases, 0);
  rpc::JobInfo last;
  ASSERT_TRUE(watch_to_end(*tuning, job.job(), &last));
  EXPECT_EQ(last.state(), "finished") << last.message();
  EXPECT_EQ(last.target(), "cuda -arch=sm_80");
  EXPECT_EQ(last.trials(), 6);
}

}  // namespace
}  // namespace tuner::server
