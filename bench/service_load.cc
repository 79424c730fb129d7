// Load test of the server's dispatch path (issue 8): an in-process tuner-server, 20 simulated
// workers speaking real gRPC on loopback (register, pull, report at once, no sandbox), and
// 1,000 measurement requests submitted concurrently by 10 "jobs". Reports dispatch latency
// (submit -> lease handed to a worker) p50/p99, measurements per second, the server's resident
// memory before and after, and checks that every request completed exactly once.
//
//   cmake -B build -DTUNER_BUILD_BENCH=ON && ninja -C build service_load
//   build/bench/service_load [--workers 20] [--requests 1000] [--jobs 10] [--artifact-kb 16]
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>
#include <unistd.h>

#include "measure/artifact.h"
#include "server/server.h"
#include "server/wire.h"
#include "tuner.grpc.pb.h"

using namespace tuner;
using Clock = std::chrono::steady_clock;

namespace {

double rss_mb() {
  std::ifstream f("/proc/self/statm");
  long pages = 0, resident = 0;
  f >> pages >> resident;
  return double(resident) * double(sysconf(_SC_PAGESIZE)) / (1 << 20);
}

std::unique_ptr<grpc::ClientContext> ctx(const std::string& token, double s) {
  auto c = std::make_unique<grpc::ClientContext>();
  server::add_token(*c, token);
  c->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(int64_t(s * 1000)));
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"service_load: dispatch throughput and latency of tuner-server"};
  int n_workers = 20, n_requests = 1000, n_jobs = 10, artifact_kb = 16;
  app.add_option("--workers", n_workers);
  app.add_option("--requests", n_requests);
  app.add_option("--jobs", n_jobs);
  app.add_option("--artifact-kb", artifact_kb);
  CLI11_PARSE(app, argc, argv);

  measure::TempDir dir("tuner-service-load");
  server::ServerOptions o;
  o.listen = "127.0.0.1:0";
  o.db_path = dir.path() + "/load.db";
  o.tokens = {"client-token", "worker-token"};
  o.dispatch.heartbeat_timeout_s = 10;
  server::Server srv(o);
  double rss0 = rss_mb();
  auto channel = grpc::CreateChannel(fmt::format("127.0.0.1:{}", srv.port()),
                                     grpc::InsecureChannelCredentials());
  const std::string target = codegen::Target::parse("llvm").str();

  std::mutex mu;
  std::map<std::string, Clock::time_point> submitted;  // candidate -> submit time
  std::vector<double> latency_ms;
  std::atomic<int> reports{0}, refused{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> workers;
  for (int i = 0; i < n_workers; ++i)
    workers.emplace_back([&, i] {
      auto stub = rpc::WorkerService::NewStub(channel);
      rpc::RegisterRequest rr;
      rr.set_target("llvm");
      rr.set_device_key(fmt::format("sim{}", i));
      rpc::RegisterReply reg;
      if (!stub->Register(ctx("worker-token", 5).get(), rr, &reg).ok()) return;
      while (!stop) {
        rpc::PullRequest pr;
        pr.set_worker_id(reg.worker_id());
        pr.set_max_leases(1);
        pr.set_wait_s(0.5);
        rpc::PullReply rep;
        if (!stub->PullWork(ctx("worker-token", 5).get(), pr, &rep).ok()) continue;
        for (const auto& l : rep.leases()) {
          auto now = Clock::now();
          {
            std::lock_guard lk(mu);
            auto it = submitted.find(l.candidate());
            if (it != submitted.end())
              latency_ms.push_back(std::chrono::duration<double, std::milli>(now - it->second).count());
          }
          rpc::ReportRequest q;
          q.set_worker_id(reg.worker_id());
          q.set_job(l.job());
          q.set_candidate(l.candidate());
          q.set_attempt(l.attempt());
          q.mutable_result()->set_status("ok");
          q.mutable_result()->add_times(1e-3);
          rpc::ReportReply a;
          if (stub->ReportResult(ctx("worker-token", 5).get(), q, &a).ok() && a.accepted()) ++reports;
          else ++refused;
        }
      }
    });
  while (srv.dispatcher().alive_workers(target) < n_workers)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));

  auto task = std::make_shared<rpc::TaskPayload>();
  task->set_key("load-task");
  auto t0 = Clock::now();
  std::vector<std::thread> jobs;
  std::atomic<int> completed{0}, failed{0};
  int per_job = n_requests / n_jobs;
  for (int j = 0; j < n_jobs; ++j)
    jobs.emplace_back([&, j] {
      std::vector<server::Work> batch;
      for (int k = 0; k < per_job; ++k) {
        server::Work w;
        w.job = fmt::format("job{}", j);
        w.target = target;
        std::string bytes(size_t(artifact_kb) << 10, char(k));
        bytes += fmt::format("{}-{}", j, k);
        w.candidate = server::sha256_hex(bytes);
        w.artifact = std::make_shared<const std::string>(std::move(bytes));
        w.symbol = "kernel";
        w.task = task;
        batch.push_back(std::move(w));
      }
      {
        std::lock_guard lk(mu);
        auto now = Clock::now();
        for (auto& w : batch) submitted[w.candidate] = now;
      }
      auto futures = srv.dispatcher().submit(std::move(batch));
      for (auto& f : futures) (f.get().ok() ? completed : failed)++;
    });
  for (auto& t : jobs) t.join();
  double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  double rss1 = rss_mb();
  stop = true;
  for (auto& t : workers) t.join();

  std::sort(latency_ms.begin(), latency_ms.end());
  auto pct = [&](double p) {
    return latency_ms.empty() ? 0.0 : latency_ms[size_t(p * double(latency_ms.size() - 1))];
  };
  fmt::print("{} requests from {} jobs, {} simulated workers, {} KiB artifacts\n",
             per_job * n_jobs, n_jobs, n_workers, artifact_kb);
  fmt::print("completed {} (failed {}), reports accepted {} refused {}, queue left {}\n",
             completed.load(), failed.load(), reports.load(), refused.load(),
             srv.dispatcher().queued());
  fmt::print("wall {:.3f} s: {:.0f} measurements/s\n", seconds, completed / seconds);
  fmt::print("dispatch latency (submit -> lease): p50 {:.2f} ms, p99 {:.2f} ms, max {:.2f} ms\n",
             pct(0.5), pct(0.99), pct(1.0));
  fmt::print("server process RSS: {:.1f} MiB before, {:.1f} MiB after\n", rss0, rss1);
  return completed == per_job * n_jobs && reports == completed ? 0 : 1;
}
