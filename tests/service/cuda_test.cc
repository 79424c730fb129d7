// The CUDA side of the device farm on a machine without a GPU: a CUDA worker refuses to start
// and says why, every driver function resolves (against the toolkit's stub driver), and a CUDA
// job fails fast, saying how to attach a GPU worker, when none is connected.
#include <gtest/gtest.h>

#include <filesystem>

#include <fmt/format.h>

#include "measure/cuda_driver.h"
#include "service/service_util.h"

namespace tuner::server {
namespace {

using namespace service_test;

int lines(const std::string& s) { return int(std::count(s.begin(), s.end(), '\n')); }

TEST(ServiceCuda, WorkerWithoutDeviceRefusesToStart) {
  if (std::string why = measure::cuda::probe(nullptr); why.empty())
    GTEST_SKIP() << "skipped: this host has a usable CUDA device (the gpu label tests it)";
  Scratch s;
  auto [code, out] = run(fmt::format("{} --server 127.0.0.1:{} --target=cuda --token-file {}",
                                     TUNER_WORKER_EXE, free_port(), s.worker_token_file));
  EXPECT_EQ(code, 1) << out;
  EXPECT_EQ(out.rfind("error: tuner-worker --target='cuda' needs a usable CUDA device on this "
                      "host: ", 0), 0u) << out;
  EXPECT_EQ(lines(out), 1) << out;
}

// The toolkit's stub libcuda.so exports every driver function and fails cuInit: loading it as
// the driver checks that each function the runner uses resolves under the ABI name cuda.h
// gives it (a missing one would be reported instead).
TEST(ServiceCuda, EveryDriverFunctionResolves) {
  std::string stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (!measure::cuda::built_with_cuda())
    GTEST_SKIP() << "skipped: built without the CUDA toolkit";
  if (!std::filesystem::exists(stub)) GTEST_SKIP() << "skipped: " << stub << " not found";
  Scratch s;
  std::filesystem::create_directories(s.path("driver"));
  std::filesystem::copy_file(stub, s.path("driver/libcuda.so.1"));
  auto [code, out] = run(fmt::format(
      "LD_LIBRARY_PATH={} {} --server 127.0.0.1:{} --target='cuda -arch=sm_90' --token-file {}",
      s.path("driver"), TUNER_WORKER_EXE, free_port(), s.worker_token_file));
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("the libcuda.so.1 found is the CUDA toolkit's stub, not the NVIDIA driver"),
            std::string::npos) << out;
  EXPECT_EQ(lines(out), 1) << out;
}

TEST(ServiceCuda, TuningWithoutGpuWorkerFailsFast) {
  Scratch s;
  std::string model = std::string(TUNER_SOURCE_DIR) + "/examples/small_cnn/model.onnx";
  // Without a server: where to get a GPU worker.
  auto [lc, local] = run(fmt::format("{} tune {} --target=cuda --trials 8 --db {}", TUNER_CLI_EXE,
                                     model, s.path("local.db")));
  EXPECT_EQ(lc, 1) << local;
  EXPECT_EQ(local.rfind("error: tuning for cuda -arch=sm_80 needs a worker on a GPU host", 0), 0u)
      << local;
  EXPECT_EQ(lines(local), 1) << local;

  // A server with only a CPU worker: refused at submission, not queued forever.
  int port = free_port();
  auto srv = start_server(s, port, s.path("cuda.db"), "server.log");
  auto w = start_worker(s, port, "cpu-w");
  auto stub = rpc::TuningService::NewStub(channel(port));
  ASSERT_TRUE(wait_until(
      [&] {
        rpc::ListWorkersReply rep;
        return stub->ListWorkers(ctx(kClientToken, 5).get(), {}, &rep).ok() &&
               rep.workers_size() == 1;
      },
      30))
      << read_file(s.path("server.log"));
  auto t0 = std::chrono::steady_clock::now();
  auto [rc, remote] =
      run(fmt::format("{} tune {} --target='cuda -arch=sm_90' --trials 8 --server 127.0.0.1:{} "
                      "--token-file {}",
                      TUNER_CLI_EXE, model, port, s.client_token_file));
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(rc, 1) << remote;
  EXPECT_NE(remote.find("no worker for cuda -arch=sm_90 is connected to this server; attach one "
                        "on a GPU host with `tuner-worker --server HOST:PORT "
                        "--target=\"cuda -arch=sm_90\""),
            std::string::npos)
      << remote;
  EXPECT_EQ(lines(remote), 1) << remote;
  EXPECT_LT(took, 20);
}

}  // namespace
}  // namespace tuner::server
