// tuner-server --listen HOST:PORT --db PATH --client-token-file F --worker-token-file F
// Serves until SIGINT/SIGTERM; jobs still running then are resumed by the next start.
#include <fmt/core.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <thread>

#include "server/server.h"
#include "support/atomic_file.h"
#include "support/cli_main.h"
#include "support/error.h"
#include "support/thread_count.h"
#include "support/log.h"

int main(int argc, char** argv) {
  using namespace tuner;
  CLI::App app{"tuner-server: tuning jobs, the tuning database and the measurement workers"};
  app.set_version_flag("--version", std::string("tuner-server ") + TUNER_VERSION_STRING);
  server::ServerOptions o;
  std::string client_token_file, worker_token_file, port_file;
  app.add_option("--listen", o.listen, "HOST:PORT to serve on (port 0: any free port)")
      ->capture_default_str();
  app.add_option("--db", o.db_path, "the tuning database")->capture_default_str();
  app.add_option("--client-token-file", client_token_file, "token of users (tuner tune --server)")
      ->required();
  app.add_option("--worker-token-file", worker_token_file, "token of tuner-worker")->required();
  app.add_option("--tls-cert", o.tls_cert, "server certificate chain (PEM); enables TLS");
  app.add_option("--tls-key", o.tls_key, "server private key (PEM)");
  app.add_option("--tls-client-ca", o.tls_client_ca, "require client certificates signed by this CA");
  app.add_option("--heartbeat-timeout", o.dispatch.heartbeat_timeout_s,
                 "seconds of silence after which a worker is lost and its leases re-queued")
      ->capture_default_str()
      ->check(number_in(0.1, 86400));
  app.add_option("--lease-margin", o.dispatch.lease_margin_s,
                 "seconds a lease lasts beyond the kernel timeout")->capture_default_str()
      ->check(number_in(0, 86400));
  app.add_option("--max-queue", o.dispatch.max_queue, "measurements queued at most")
      ->capture_default_str()
      ->check(number_in(1, 1e8));
  app.add_option("--kernel-timeout", o.jobs.runner.kernel_timeout_s,
                 "time limit of one candidate on a worker, seconds")->capture_default_str()
      ->check(number_in(0.01, 86400));
  app.add_option("--wait-for-workers", o.jobs.runner.wait_for_workers_s,
                 "a job fails after this many seconds without a worker of its target")
      ->capture_default_str()
      ->check(number_in(0, 1e6));
  app.add_option("--max-jobs", o.jobs.max_active_jobs, "jobs running at once")
      ->capture_default_str()
      ->check(number_in(1, 1000));
  app.add_option("--build-threads", o.jobs.builder_threads, "parallel builds per job (0: cores)")
      ->capture_default_str()
      ->check(number_in(0, kMaxThreads));
  app.add_option("--port-file", port_file, "write the bound port to this file once serving")
      ->check(nonempty_path());
  return run_command_line(app, argc, argv, [&] {
    // Signals are taken by one thread (sigwait), so every other thread runs with them blocked.
    sigset_t set = block_stop_signals();
    server::check_address(o.listen, "--listen");
    // Fail now, not silently after starting, when the port file cannot be written.
    if (!port_file.empty()) check_output_path(port_file);
    o.tokens = {server::read_token_file(client_token_file, "--client-token-file"),
                server::read_token_file(worker_token_file, "--worker-token-file")};
    server::Server srv(o);
    fmt::print(stderr, "tuner-server listening on port {} (database {}){}\n", srv.port(),
               o.db_path,
               srv.resumed_jobs() ? fmt::format(", resumed {} jobs", srv.resumed_jobs()) : "");
    // Readers never see a partial file.
    if (!port_file.empty()) write_file_atomically(port_file, std::to_string(srv.port()) + "\n");
    std::thread waiter([&] {
      int sig = 0;
      sigwait(&set, &sig);
      fmt::print(stderr, "tuner-server: shutting down\n");
      srv.shutdown();
    });
    srv.wait();
    waiter.join();
  });
}
