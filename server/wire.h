// What the server and the worker share on the wire: size limits, SHA-256 digests (OpenSSL),
// bounded file reading, and results to and from their protobuf form.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "measure/built_candidate.h"
#include "measure/measure_result.h"
#include "ops/host_tensor.h"
#include "tuner.pb.h"

namespace tuner::server {

/// Largest shared object the server sends or a worker accepts.
inline constexpr size_t kMaxArtifactBytes = 32u << 20;
/// Largest gRPC message either side accepts (a lease with its task's inputs).
inline constexpr int kMaxMessageBytes = 256 << 20;

/// Lower-case hex SHA-256 of the bytes.
std::string sha256_hex(std::string_view bytes);

/// Sends gRPC's own log lines to the debug log (shown with --verbose) in a client or worker:
/// a refused TLS handshake printed gRPC's raw line before the command's one error line.
void quiet_grpc_log();
/// The text of a PEM file (a TLS certificate or key); UserError when it cannot be read or holds
/// no PEM block (gRPC would only log that and retry forever).
std::string read_pem(const std::string& path);

/// Whether a job has ended: finished, failed or cancelled.
bool job_ended(const rpc::JobInfo& j);

/// A result in its wire form and back (an unknown status name becomes UNKNOWN).
rpc::Result to_proto(const measure::MeasureResult& r);
measure::MeasureResult from_proto(const rpc::Result& r);

/// A tensor with its bytes in wire form and back (UserError when the bytes do not match the
/// dtype and shape).
void to_proto(const ops::HostTensor& t, rpc::TensorData* p);
ops::HostTensor from_proto(const rpc::TensorData& p);

/// A CUDA program's launches in wire form and back (UserError unless every grid and block
/// has 3 values).
rpc::GpuProgram to_proto(const measure::GpuProgram& g);
measure::GpuProgram from_proto(const rpc::GpuProgram& p);

}  // namespace tuner::server
