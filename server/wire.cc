#include "server/wire.h"

#include <fmt/format.h>
#include <grpc/support/log.h>
#include <openssl/evp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>

#include "db/record.h"
#include "support/error.h"
#include "support/log.h"
#include "support/read_file.h"

namespace tuner::server {

std::string read_pem(const std::string& path) {
  std::string text = read_file_bytes(path, size_t(1) << 20);
  USER_CHECK(text.find("-----BEGIN ") != std::string::npos)
      << path << ": not a PEM file (no -----BEGIN line)";
  return text;
}

bool job_ended(const rpc::JobInfo& j) {
  return j.state() == "finished" || j.state() == "failed" || j.state() == "cancelled";
}

std::string sha256_hex(std::string_view bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  INTERNAL_CHECK(EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr) == 1);
  std::string out;
  for (unsigned i = 0; i < len; ++i) out += fmt::format("{:02x}", md[i]);
  return out;
}

rpc::Result to_proto(const measure::MeasureResult& r) {
  rpc::Result p;
  p.set_status(db::status_name(r.status));
  p.set_error(r.error);
  for (double t : r.times) p.add_times(t);
  p.set_run_seconds(r.run_seconds);
  p.set_kernel_seconds(r.kernel_seconds);
  p.set_calls_per_repeat(r.calls_per_repeat);
  return p;
}

measure::MeasureResult from_proto(const rpc::Result& p) {
  measure::MeasureResult r;
  auto s = db::parse_status(p.status());
  r.status = s ? *s : db::MeasureStatus::Unknown;
  r.error = p.error();
  r.times.assign(p.times().begin(), p.times().end());
  r.run_seconds = p.run_seconds();
  r.kernel_seconds = p.kernel_seconds();
  r.calls_per_repeat = p.calls_per_repeat();
  // A worker's numbers are checked here, not when the round commits: the database refuses such
  // a record, and one bad report must not fail the job's whole round.
  if (std::string why = db::times_problem(r.status, r.times); !why.empty())
    r = measure::make_error(db::MeasureStatus::Unknown, "the worker reported invalid times: " + why);
  if (!db::valid_duration(r.run_seconds) || !db::valid_duration(r.kernel_seconds) ||
      r.calls_per_repeat < 0)
    r = measure::make_error(db::MeasureStatus::Unknown, "the worker reported invalid run times");
  return r;
}

void to_proto(const ops::HostTensor& t, rpc::TensorData* p) {
  p->set_dtype(t.dtype.str());
  for (int64_t s : t.shape) p->add_shape(s);
  p->set_data(static_cast<const char*>(t.raw()), t.bytes());
}

ops::HostTensor from_proto(const rpc::TensorData& p) {
  ops::HostTensor h(std::vector<int64_t>(p.shape().begin(), p.shape().end()),
                    te::DataType::parse(p.dtype()));
  USER_CHECK(p.data().size() == h.bytes()) << "a tensor's size does not match its shape";
  std::memcpy(h.raw(), p.data().data(), h.bytes());
  return h;
}

rpc::GpuProgram to_proto(const measure::GpuProgram& g) {
  rpc::GpuProgram p;
  for (const measure::GpuLaunch& k : g.kernels) {
    rpc::GpuLaunch* l = p.add_kernels();
    l->set_entry(k.entry);
    for (uint32_t v : k.grid) l->add_grid(v);
    for (uint32_t v : k.block) l->add_block(v);
    l->set_shared_bytes(k.shared_bytes);
  }
  for (int64_t b : g.workspace_bytes) p.add_workspace_bytes(b);
  return p;
}

measure::GpuProgram from_proto(const rpc::GpuProgram& p) {
  measure::GpuProgram g;
  USER_CHECK(p.kernels_size() > 0) << "a CUDA program without kernels";
  for (const rpc::GpuLaunch& l : p.kernels()) {
    USER_CHECK(l.grid_size() == 3 && l.block_size() == 3)
        << "a CUDA launch needs 3 grid and 3 block dimensions";
    measure::GpuLaunch k;
    k.entry = l.entry();
    for (int i = 0; i < 3; ++i) {
      k.grid[size_t(i)] = l.grid(i);
      k.block[size_t(i)] = l.block(i);
    }
    k.shared_bytes = l.shared_bytes();
    g.kernels.push_back(std::move(k));
  }
  g.workspace_bytes.assign(p.workspace_bytes().begin(), p.workspace_bytes().end());
  return g;
}

namespace {

void grpc_log_to_debug(gpr_log_func_args* a) {
  tuner::log(LogLevel::Debug, "grpc: {}", a->message);
}

}  // namespace

void quiet_grpc_log() {
  static std::once_flag once;
  std::call_once(once, [] { gpr_set_log_function(grpc_log_to_debug); });
}

}  // namespace tuner::server
