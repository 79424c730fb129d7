// tuner-worker --server HOST:PORT --target=llvm --token-file F [--max-parallel 1]
// Measures candidates for a tuner-server until SIGINT/SIGTERM. A target of another
// architecture (aarch64 on x86) is measured under qemu: an emulated board.
#include <fmt/core.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <thread>

#include "measure/measure_option.h"
#include "server/auth.h"
#include "support/address_space.h"
#include "support/cli_main.h"
#include "support/error.h"
#include "support/thread_count.h"
#include "worker/cuda_device.h"
#include "worker/worker.h"

int main(int argc, char** argv) {
  using namespace tuner;
  CLI::App app{"tuner-worker: measures tuning candidates for a tuner-server"};
  app.set_version_flag("--version", std::string("tuner-worker ") + TUNER_VERSION_STRING);
  worker::WorkerOptions o;
  std::string token_file;
  app.add_option("--server", o.server, "HOST:PORT of the tuner-server")->required();
  app.add_option("--target", o.target,
                 "the target this machine measures ('llvm', 'cuda' (arch of device 0), "
                 "'cuda -arch=sm_80', ...; another CPU architecture's: emulated under qemu)")
      ->capture_default_str();
  app.add_option("--token-file", token_file, "the worker token")->required();
  app.add_option("--max-parallel", o.max_parallel, "measurements at once")->capture_default_str()
      ->check(number_in(1, kMaxThreads));
  app.add_option("--device-key", o.device_key, "this board's name (default: host name)");
  o.runner.threads = 0;  // 0: this board's cores, below
  measure::add_threads_option(&app, &o.runner.threads,
                              "threads of a measured kernel (default: TUNER_NUM_THREADS or the "
                              "cores, shared among --max-parallel measurements)");
  app.add_option("--memory-limit-mb", o.runner.memory_limit_mb,
                 "address-space limit of the measurement child")->capture_default_str()
      ->check(number_in(0, 1e9));
  app.add_option("--min-repeat-ms", o.runner.min_repeat_ms, "minimum duration of a timed repeat")
      ->capture_default_str()
      ->check(number_in(0, 60000));
  measure::add_measure_option(&app, &o.runner.cold_calls);
  app.add_option("--tls-ca", o.tls_ca, "CA certificate of a TLS server (PEM)");
  app.add_option("--max-backoff", o.max_backoff_s, "longest wait between reconnection attempts, s")
      ->capture_default_str()
      ->check(number_in(0.01, 86400));
  return run_command_line(app, argc, argv, [&] {
    sigset_t set = block_stop_signals();
    if (o.runner.threads == 0) o.runner.threads = std::max(1, default_num_threads() / o.max_parallel);
    server::check_address(o.server, "--server");
    // The kind here (no LLVM in the worker); the server checks the rest when it registers,
    // but an unreachable server would leave a misspelt target retrying for ever.
    std::string kind = worker::target_kind(o.target);
    USER_CHECK(kind == "llvm" || kind == "cuda")
        << "--target: unknown target kind '" << kind << "' (known: llvm, cuda)";
    o.token = server::read_token_file(token_file, "--token-file");
    if (worker::is_cuda_target(o.target))
      fmt::print(stderr, "tuner-worker: measuring on {}\n", worker::use_cuda_device(&o));
    // gRPC aborts when one of its threads cannot start: check first.
    check_room_for_threads("tuner-worker", grpc_service_threads());
    worker::Worker w(o);
    std::thread waiter([&] {
      int sig = 0;
      sigwait(&set, &sig);
      w.stop();
    });
    waiter.detach();  // the process ends with run(); the waiter needs no join
    w.run();
  });
}
