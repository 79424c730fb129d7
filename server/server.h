// tuner-server: the database, the dispatcher, the jobs and the three gRPC services (plus
// gRPC's health service) on one port.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "db/sqlite_database.h"
#include "server/auth.h"
#include "server/dispatcher.h"
#include "server/jobs.h"

namespace tuner::server {

struct ServerOptions {
  /// HOST:PORT; port 0 picks a free one (see Server::port()).
  std::string listen = "127.0.0.1:7777";
  std::string db_path = "tuning_logs/tuning.db";
  Tokens tokens;
  /// TLS: server certificate chain and key (PEM); with a client CA, clients must present a
  /// certificate it signed. Empty: plaintext.
  std::string tls_cert, tls_key, tls_client_ca;
  DispatcherOptions dispatch;
  JobOptions jobs;  // jobs_dir defaults to <db>.jobs
};

class Server {
 public:
  /// Opens the database, binds the port and starts serving; resumes unfinished jobs.
  /// UserError when the database cannot be opened or the address cannot be bound.
  explicit Server(ServerOptions opts);
  /// Shuts down (jobs stop between rounds and stay resumable).
  ~Server();

  /// The bound port.
  int port() const { return port_; }
  /// Blocks until shutdown() is called from another thread.
  void wait();
  /// Stops serving; in-flight calls are given a moment to finish.
  void shutdown();
  /// The work queue and worker registry (tests drive a RemoteRunner through it).
  Dispatcher& dispatcher() { return *dispatcher_; }
  /// Jobs resumed at start-up.
  int resumed_jobs() const { return resumed_; }

 private:
  // Opens the database and locks it for the server's life (a UserError when another server
  // holds it).
  void open_database();
  // Starts the services and binds the port (the constructor undoes what it created on failure).
  void start();

  struct Fd {  // closed with the server, also when its constructor throws
    int fd = -1;
    ~Fd();
  };
  ServerOptions opts_;
  Fd lock_;
  std::unique_ptr<db::SqliteDatabase> db_;
  std::unique_ptr<Dispatcher> dispatcher_;
  std::unique_ptr<JobManager> jobs_;
  std::unique_ptr<grpc::Service> tuning_, worker_, database_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  int resumed_ = 0;
};

}  // namespace tuner::server
