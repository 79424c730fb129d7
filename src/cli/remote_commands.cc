// The CLI's side of the service: `tuner tune MODEL --server ...` / `tuner op tune OP --server
// ...` submit a job and follow it; `tuner workers --server ...` lists the workers. Every call
// has a deadline, so an unreachable server is one error line, never a hang.
#include <fmt/core.h>
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "cli/commands.h"
#include "cli/tune_view.h"
#include "codegen/target.h"
#include "server/auth.h"
#include "server/wire.h"
#include "support/atomic_file.h"
#include "support/error.h"
#include "support/escape.h"
#include "support/json.h"
#include "support/read_file.h"
#include "support/stop_signal.h"
#include "tuner.grpc.pb.h"

namespace tuner::cli {

namespace {

// Plaintext, or TLS when tls_ca names the CA certificate (PEM) of the server.
std::shared_ptr<grpc::Channel> channel(const std::string& server, const std::string& tls_ca) {
  USER_CHECK(!server.empty()) << "--server HOST:PORT is required";
  server::check_address(server, "--server");
  server::quiet_grpc_log();
  grpc::ChannelArguments args;
  args.SetMaxSendMessageSize(server::kMaxMessageBytes);
  args.SetMaxReceiveMessageSize(server::kMaxMessageBytes);
  // Pings notice a server that vanished without closing the connection (the Watch stream
  // has no deadline).
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 20000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
  std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials();
  if (!tls_ca.empty()) {
    grpc::SslCredentialsOptions so;
    so.pem_root_certs = server::read_pem(tls_ca);  // as tuner-worker reads it
    creds = grpc::SslCredentials(so);
  }
  return grpc::CreateCustomChannel(server, creds, args);
}

std::unique_ptr<grpc::ClientContext> context(const std::string& token, double timeout_s) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  server::add_token(*ctx, token);
  if (timeout_s > 0)
    ctx->set_deadline(std::chrono::system_clock::now() +
                      std::chrono::milliseconds(int64_t(timeout_s * 1000)));
  return ctx;
}

// One clear line for a failed call.
[[noreturn]] void fail(const std::string& server, const grpc::Status& s) {
  auto code = s.error_code();
  USER_CHECK(code != grpc::StatusCode::UNAVAILABLE)
      << "cannot reach the tuner-server at " << server << ": " << s.error_message();
  // Not refused, just silent: the address may well be right.
  USER_CHECK(code != grpc::StatusCode::DEADLINE_EXCEEDED)
      << "the tuner-server at " << server << " did not answer in time (" << s.error_message()
      << "): stopped, overloaded, or behind a firewall that drops packets";
  USER_CHECK(code != grpc::StatusCode::UNAUTHENTICATED &&
             code != grpc::StatusCode::PERMISSION_DENIED)
      << "the tuner-server at " << server << " refused the token: " << s.error_message();
  USER_ERROR() << "the tuner-server at " << server << ": " << s.error_message();
}

std::string ms_with_unit(double s) { return s > 0 ? format_ms(s) + " ms" : "-"; }

}  // namespace

void remote_tune(const RemoteTuneArgs& a) {
  USER_CHECK(!a.remote.token_file.empty()) << "--server needs --token-file";
  std::string token = server::read_token_file(a.remote.token_file, "--token-file");
  rpc::SubmitRequest req;
  if (!a.op.empty()) {
    req.mutable_op()->set_op(a.op);
    for (const auto& p : a.params) req.mutable_op()->add_params(p);
  } else {
    auto* m = req.mutable_model();
    m->set_name(std::filesystem::path(a.model).filename().string());
    // A regular file of bounded size: /dev/zero was read until memory ran out.
    m->set_onnx(read_file_bytes(a.model, size_t(server::kMaxMessageBytes) - (1u << 20),
                                "a model sent to a server fits in one 256 MiB message"));
    for (const auto& s : a.input_shapes) m->add_input_shapes(s);
    m->set_no_fuse(a.no_fuse);
    m->set_no_winograd(!a.winograd);
  }
  req.set_target(a.target);
  req.set_trials(a.trials);
  req.set_seed(a.seed);
  req.set_batch(a.batch);
  req.set_early_stop(a.early_stop);
  auto stub = rpc::TuningService::NewStub(channel(a.remote.server, a.remote.tls_ca));
  rpc::SubmitReply rep;
  auto ctx = context(token, 30);
  if (auto s = stub->Submit(ctx.get(), req, &rep); !s.ok()) fail(a.remote.server, s);
  const std::string job = rep.job();
  const bool progress = !a.json && !a.quiet;
  if (progress) fmt::print(stderr, "submitted job {} to {}\n", job, a.remote.server);

  // Follow the job until it ends or Ctrl-C (or SIGTERM). A watcher thread cancels the stream
  // then.
  std::optional<StopSignals> stop_signals(std::in_place);
  rpc::JobInfo last;
  bool ended = false;
  // A server restart breaks the stream: follow again, for up to a minute without contact.
  auto last_contact = std::chrono::steady_clock::now();
  bool told_lost = false;
  while (!ended && !StopSignals::requested()) {
    auto wctx = context(token, 0);
    std::atomic<bool> done{false};
    std::thread watcher([&] {
      while (!done && !StopSignals::requested())
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      if (StopSignals::requested()) wctx->TryCancel();
    });
    rpc::WatchRequest wr;
    wr.set_job(job);
    auto reader = stub->Watch(wctx.get(), wr);
    rpc::JobInfo info;
    bool tty = isatty(2) && progress;
    while (reader->Read(&info)) {
      last = info;
      last_contact = std::chrono::steady_clock::now();
      told_lost = false;
      if (progress) {
        std::string errs;
        for (auto& [k, v] : info.errors()) errs += fmt::format(" {}={}", k, v);
        std::string line =
            fmt::format("job {} {}: trials {}/{}  {}  best {}  errors:{}", job, info.state(),
                        info.trials(), info.budget(),
                        info.state() == "failed" ? "" : info.message(),  // the error line says it
                        ms_with_unit(info.best_seconds()), errs.empty() ? " none" : errs);
        if (tty) fmt::print(stderr, "\r\033[K{}", line);
        else fmt::print(stderr, "{}\n", line);
      }
      if (server::job_ended(info)) ended = true;
    }
    grpc::Status s = reader->Finish();
    done = true;
    watcher.join();
    if (tty) fmt::print(stderr, "\n");
    if (ended || StopSignals::requested()) break;
    // The stream broke (server restarted?): follow again; one error line after a minute.
    if (std::chrono::steady_clock::now() - last_contact > std::chrono::seconds(60)) {
      stop_signals.reset();
      fail(a.remote.server, s);
    }
    if (!told_lost && !a.json) {  // the minute of retries is not silence
      fmt::print(stderr, "lost the connection to {} ({}); following job {} again for up to a minute\n",
                 a.remote.server, s.error_message(), job);
      told_lost = true;
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  stop_signals.reset();
  if (StopSignals::requested()) {
    if (a.remote.cancel_on_exit) {
      rpc::CancelRequest cr;
      cr.set_job(job);
      rpc::CancelReply crep;
      auto cctx = context(token, 10);
      if (auto s = stub->Cancel(cctx.get(), cr, &crep); !s.ok()) fail(a.remote.server, s);
      fmt::print(stderr, "cancelled job {}\n", job);
    } else {
      fmt::print(stderr, "detached: job {} goes on at {}\n", job, a.remote.server);
    }
    throw CLI::RuntimeError(StopSignals::exit_status());  // as a local run: 128 + the signal
  }
  // The target the job measured: the board's, or its emulated twin (its records are kept
  // under that identity; the timings are not performance figures).
  bool emulated = codegen::is_emulated_target(last.target());
  if (a.json) {
    Json e = Json::object();
    for (auto& [k, v] : last.errors()) e[k] = v;
    fmt::print("{}\n", Json{{"job", job}, {"state", last.state()}, {"trials", last.trials()},
                            {"budget", last.budget()}, {"best_seconds", last.best_seconds()},
                            {"errors", e}, {"message", last.message()},
                            {"target", last.target()}, {"emulated", emulated}}
                           .dump());
  } else if (last.state() != "failed") {  // a failure is the one error line below
    fmt::print("job {} {}: {} trials\n", job, last.state(), last.trials());
    if (emulated && last.trials() > 0)
      fmt::print("measured under emulation: records are under '{}', apart from real boards' "
                 "(their timings are not performance figures)\n", last.target());
  }
  USER_CHECK(last.state() != "failed")
      << "job " << job << " failed"
      << (last.trials() > 0 ? fmt::format(" after {} trials", last.trials()) : "") << ": "
      << last.message();
  USER_CHECK(last.state() != "cancelled") << "job " << job << " was cancelled after "
                                          << last.trials() << " trials";
}

void remote_db(const std::string& command, const RemoteDbArgs& a) {
  std::string token = server::read_token_file(a.token_file, "--token-file");
  auto stub = rpc::DatabaseService::NewStub(channel(a.server, a.tls_ca));
  if (command == "best") {
    rpc::TopKRequest req;
    req.set_workload(a.workload);
    req.set_target(a.target);  // empty: the server takes the workload's only target
    req.set_k(a.top);
    rpc::TopKReply rep;
    auto ctx = context(token, 30);
    if (auto s = stub->TopK(ctx.get(), req, &rep); !s.ok()) fail(a.server, s);
    if (a.json) {
      Json recs = Json::array();
      for (const auto& r : rep.records()) {
        Json trace = parse_json(r.trace(), false);
        if (trace.is_discarded()) trace = r.trace();  // not JSON we read: as the server sent it
        recs.push_back({{"id", r.id()}, {"median", r.median_seconds()}, {"worker", r.worker()},
                        {"trace", std::move(trace)}});
      }
      fmt::print("{}\n", Json{{"workload", a.workload}, {"records", recs}}.dump(2));
      return;
    }
    if (rep.records().empty()) return fmt::print("no successful measurement yet\n");
    for (int i = 0; i < rep.records_size(); ++i)
      fmt::print("{:>4}  record {:<8} {:>14}  {}\n", i + 1, rep.records(i).id(),
                 ms_with_unit(rep.records(i).median_seconds()), rep.records(i).worker());
    return;
  }
  if (command == "export") {
    rpc::ExportRequest req;
    req.set_target(a.target);
    auto ctx = context(token, 600);
    auto reader = stub->Export(ctx.get(), req);
    int64_t lines = 0;
    auto receive = [&](std::ostream& out) {
      rpc::RecordLines chunk;
      while (reader->Read(&chunk)) {
        lines += std::count(chunk.lines().begin(), chunk.lines().end(), '\n');
        out << chunk.lines();
      }
      if (grpc::Status s = reader->Finish(); !s.ok()) fail(a.server, s);
    };
    if (a.output == "-") return receive(std::cout);
    write_file_atomically(a.output, receive);  // a failed export leaves no half file
    fmt::print("exported {} records from {} to {}\n", lines, a.server, a.output);
    return;
  }
  USER_CHECK(command == "import") << "unknown remote db command " << command;
  ImportInput input(a.file);
  std::istream& in = input.stream();
  rpc::ImportReply rep;
  auto ctx = context(token, 600);
  auto writer = stub->Import(ctx.get(), &rep);
  std::string line, buf;
  while (std::getline(in, line)) {
    buf += line;
    buf += '\n';
    if (buf.size() >= (256u << 10)) {
      rpc::RecordLines m;
      m.set_lines(std::move(buf));
      buf.clear();
      if (!writer->Write(m)) break;
    }
  }
  if (!buf.empty()) {
    rpc::RecordLines m;
    m.set_lines(std::move(buf));
    writer->Write(m);
  }
  writer->WritesDone();
  if (auto s = writer->Finish(); !s.ok()) fail(a.server, s);
  USER_CHECK(!in.bad()) << "reading '" << a.file << "' failed";
  for (const auto& b : rep.bad()) fmt::print(stderr, "warning: {}:{}\n", a.file, b);  // FILE:N: why
  if (a.json)
    return fmt::print("{}\n", Json{{"file", a.file}, {"lines", rep.lines()},
                                   {"inserted", rep.inserted()}, {"duplicates", rep.duplicates()}}
                                  .dump(2));
  fmt::print("imported {} new records from {} into {} ({} already present, {} bad lines skipped)\n",
             rep.inserted(), a.file, a.server, rep.duplicates(), rep.bad_size());
  // As locally: a file of nothing but bad lines is not a success.
  USER_CHECK(rep.bad().empty() || rep.inserted() + rep.duplicates() > 0)
      << "no valid record in '" << a.file << "' (" << rep.bad_size() << " bad lines)";
}

void add_remote_commands(CLI::App& app) {
  struct Args {
    std::string server, token_file, tls_ca;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("workers", "list the workers of a tuner-server");
  cmd->add_option("--server", a->server, "HOST:PORT of the tuner-server")->required();
  cmd->add_option("--token-file", a->token_file, "the client token")->required();
  cmd->add_option("--tls-ca", a->tls_ca, "CA certificate (PEM) of a TLS server");
  cmd->callback([a] {
    std::string token = server::read_token_file(a->token_file, "--token-file");
    auto stub = rpc::TuningService::NewStub(channel(a->server, a->tls_ca));
    rpc::ListWorkersReply rep;
    auto ctx = context(token, 10);
    if (auto s = stub->ListWorkers(ctx.get(), {}, &rep); !s.ok()) fail(a->server, s);
    // "emulated": the kernels run under qemu; its timings are not performance figures. The
    // strings come from workers and users: escaped before they reach the terminal.
    fmt::print("{:<14} {:<6} {:<8} {:<20} {:>14} {:>12} {:>6}  {}\n", "worker", "state", "kind",
               "device", "last heartbeat", "measurements", "leases", "target");
    for (const auto& w : rep.workers())
      fmt::print("{:<14} {:<6} {:<8} {:<20} {:>12.1f} s {:>12} {:>6}  {}\n",
                 escape_controls(w.worker_id()), w.state(), w.emulated() ? "emulated" : "board",
                 escape_controls(w.device_key()), w.seconds_since_heartbeat(), w.measurements(),
                 w.leases(), escape_controls(w.target()));
    if (rep.workers().empty()) fmt::print("(no workers have registered)\n");
  });

  auto j = std::make_shared<Args>();
  auto cancel = std::make_shared<std::string>();
  auto* jobs = app.add_subcommand("jobs", "list the jobs of a tuner-server, or cancel one");
  jobs->add_option("--server", j->server, "HOST:PORT of the tuner-server")->required();
  jobs->add_option("--token-file", j->token_file, "the client token")->required();
  jobs->add_option("--tls-ca", j->tls_ca, "CA certificate (PEM) of a TLS server");
  auto* cancel_opt = jobs->add_option("--cancel", *cancel, "cancel this job");
  jobs->callback([j, cancel, cancel_opt] {
    USER_CHECK(!cancel_opt->count() || !cancel->empty()) << "--cancel needs a job id (`tuner jobs` lists them)";
    std::string token = server::read_token_file(j->token_file, "--token-file");
    auto stub = rpc::TuningService::NewStub(channel(j->server, j->tls_ca));
    if (!cancel->empty()) {
      // A job that already ended has nothing to cancel: say so rather than "cancelling".
      rpc::ListJobsReply jobs_now;
      auto lctx = context(token, 10);
      if (auto s = stub->List(lctx.get(), {}, &jobs_now); !s.ok()) fail(j->server, s);
      for (const auto& x : jobs_now.jobs())
        if (x.job() == *cancel && server::job_ended(x)) {
          fmt::print("job {} already {}: nothing to cancel\n", *cancel, x.state());
          return;
        }
      rpc::CancelRequest req;
      req.set_job(*cancel);
      rpc::CancelReply rep;
      auto ctx = context(token, 10);
      if (auto s = stub->Cancel(ctx.get(), req, &rep); !s.ok()) fail(j->server, s);
      fmt::print("cancelling job {}\n", *cancel);
      return;
    }
    rpc::ListJobsReply rep;
    auto ctx = context(token, 10);
    if (auto s = stub->List(ctx.get(), {}, &rep); !s.ok()) fail(j->server, s);
    fmt::print("{:<6} {:<10} {:>11} {:<40} {:<24} {}\n", "job", "state", "trials", "what",
               "target", "message");
    for (const auto& x : rep.jobs())
      fmt::print("{:<6} {:<10} {:>5}/{:<5} {:<40} {:<24} {}\n", x.job(), x.state(), x.trials(),
                 x.budget(), escape_controls(first_chars(x.what(), 40)),
                 escape_controls(x.target()), escape_controls(x.message()));
    if (rep.jobs().empty()) fmt::print("(no jobs since the server started)\n");
  });
}

}  // namespace tuner::cli
