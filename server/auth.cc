#include "server/auth.h"

#include <openssl/crypto.h>

#include <fstream>
#include <sstream>

#include "support/error.h"
#include "support/read_file.h"

namespace tuner::server {

namespace {

// Constant-time comparison, so response times do not reveal how much of a token matched.
bool same_token(const std::string& a, const std::string& b) {
  return a.size() == b.size() && !a.empty() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace

std::string read_token_file(const std::string& path, const std::string& option) {
  std::string t;
  try {
    t = read_file_bytes(path, 64 << 10);
  } catch (const UserError& e) {
    USER_ERROR() << option << ": " << e.what();
  }
  size_t b = t.find_first_not_of(" \t\r\n"), e = t.find_last_not_of(" \t\r\n");
  USER_CHECK(b != std::string::npos) << option << ": the token file " << path << " is empty";
  t = t.substr(b, e - b + 1);
  // It travels as an HTTP/2 header value: gRPC aborts the process on any other byte (and
  // prints the header, the secret, in its log).
  for (size_t i = 0; i < t.size(); ++i)
    USER_CHECK(t[i] >= ' ' && t[i] <= '~') << option << ": the token file " << path
                                           << " holds a character a token may not have at byte "
                                           << b + i << " (one line of printable ASCII)";
  return t;
}

void check_address(const std::string& address, const std::string& what) {
  size_t colon = address.rfind(':');
  USER_CHECK(colon != std::string::npos && colon > 0)
      << what << " '" << address << "' is not HOST:PORT";
  // gRPC reads "::1:7777" as another address than meant: an IPv6 host goes in brackets.
  std::string host = address.substr(0, colon);
  bool bracketed = host.front() == '[' && host.back() == ']' && host.size() > 2;
  USER_CHECK(bracketed ? host.find_first_of("[]", 1) == host.size() - 1
                       : host.find_first_of(":[]") == std::string::npos)
      << what << " '" << address << "' is not HOST:PORT (an IPv6 address goes in brackets: "
      << "[::1]:7777)";
  std::string port = address.substr(colon + 1);
  USER_CHECK(!port.empty() && port.size() <= 5 &&
             port.find_first_not_of("0123456789") == std::string::npos && std::stoi(port) <= 65535)
      << what << " '" << address << "': the port must be a number from 0 to 65535";
}

grpc::Status check_token(const grpc::ServerContext& ctx, const Tokens& tokens, Role role) {
  const auto& md = ctx.client_metadata();
  auto it = md.find("authorization");
  if (it == md.end())
    return {grpc::StatusCode::UNAUTHENTICATED, "missing authorization: Bearer <token>"};
  std::string v(it->second.data(), it->second.size());
  const std::string prefix = "Bearer ";
  if (v.rfind(prefix, 0) != 0)
    return {grpc::StatusCode::UNAUTHENTICATED, "authorization must be Bearer <token>"};
  std::string token = v.substr(prefix.size());
  const std::string& mine = role == Role::Client ? tokens.client : tokens.worker;
  const std::string& other = role == Role::Client ? tokens.worker : tokens.client;
  if (same_token(token, mine)) return grpc::Status::OK;
  if (same_token(token, other))
    return {grpc::StatusCode::PERMISSION_DENIED,
            role == Role::Client ? "a worker token cannot use the client services"
                                 : "a client token cannot act as a worker"};
  return {grpc::StatusCode::UNAUTHENTICATED, "unknown token"};
}

void add_token(grpc::ClientContext& ctx, const std::string& token) {
  ctx.AddMetadata("authorization", "Bearer " + token);
}

}  // namespace tuner::server
