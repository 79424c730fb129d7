// Bearer tokens: every call carries `authorization: Bearer <token>`; the client token opens
// TuningService and DatabaseService, the worker token opens WorkerService.
#pragma once

#include <grpcpp/grpcpp.h>

#include <string>

namespace tuner::server {

enum class Role { Client, Worker };

/// The token in a file (surrounding whitespace removed); UserError naming `option`
/// (--token-file, ...) when the file is missing, empty or not one line of printable ASCII.
std::string read_token_file(const std::string& path, const std::string& option);

/// The tokens the server accepts.
struct Tokens {
  std::string client, worker;
};

/// OK when the call carries the token of `role`; UNAUTHENTICATED without a known token;
/// PERMISSION_DENIED for the other role's token.
grpc::Status check_token(const grpc::ServerContext& ctx, const Tokens& tokens, Role role);

/// Fails with a UserError naming `what` (--listen, --server) unless `address` is HOST:PORT
/// with a port of 0..65535 (gRPC would take 99999 modulo 65536) and an IPv6 host in brackets.
void check_address(const std::string& address, const std::string& what);

/// Adds the token to a client call.
void add_token(grpc::ClientContext& ctx, const std::string& token);

}  // namespace tuner::server
