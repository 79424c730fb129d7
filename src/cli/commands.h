// Each command group registers its subcommands on the `tuner` app.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <fstream>
#include <istream>
#include <memory>
#include <string>
#include <vector>

namespace tuner::cli {

/// `tuner op list|show|run ...` (op_commands.cc).
void add_op_commands(CLI::App& app);
/// `tuner db list|best|show|stats|export|import|prune|verify` (db_commands.cc).
void add_db_commands(CLI::App& app);
/// `tuner costmodel eval` (costmodel_commands.cc).
void add_costmodel_commands(CLI::App& app);
/// `tuner tasks|compile|run` for whole ONNX models (model_commands.cc).
void add_model_commands(CLI::App& app);
/// `tuner tune MODEL`: whole-model tuning (model_tune.cc).
void add_model_tune_command(CLI::App& app);
/// `tuner report [RUN]`: an HTML page about a tuning run (report_command.cc).
void add_report_command(CLI::App& app);

/// Where a tuning job goes: `--server`, `--token-file`, `--tls-ca`, `--cancel-on-exit`.
struct RemoteOptions {
  std::string server, token_file, tls_ca;  // no server: tune locally
  bool cancel_on_exit = false;
};
/// Registers the RemoteOptions flags on a tune command (model_common.cc); the options named
/// in `local_only` are refused when --server is given.
void add_remote_options(CLI::App* cmd, RemoteOptions& o, std::vector<std::string> local_only);

/// What `tuner tune MODEL --server` and `tuner op tune OP --server` submit.
struct RemoteTuneArgs {
  RemoteOptions remote;
  std::string op;                   // an op job when set, else a model job
  std::vector<std::string> params;  // the op's key=value parameters
  std::string model;
  std::vector<std::string> input_shapes;
  bool no_fuse = false;
  bool winograd = true;
  std::string target = "llvm";
  int trials = 0, batch = 0, early_stop = 0;
  uint64_t seed = 0;
  bool json = false;
  bool quiet = false;  // only the final summary
};
/// Submits a job to the server and follows it to its end (Ctrl-C detaches, or cancels with
/// cancel_on_exit, and exits 130; a cancelled or failed job is a UserError);
/// remote_commands.cc, a UserError when built without gRPC.
void remote_tune(const RemoteTuneArgs& a);
/// What `tuner db best|export|import --server` needs.
struct RemoteDbArgs {
  std::string server, token_file, tls_ca;
  std::string workload, target, file, output;
  int top = 1;
  bool json = false;
};
/// `tuner db best|export|import` against the server's database ("best", "export", "import").
void remote_db(const std::string& command, const RemoteDbArgs& a);

/// The records file of `db import` ("-": standard input; pipes and FIFOs too): a directory,
/// an unreadable file, an SQLite database or binary data (a gzip-compressed export) is one
/// error naming it.
class ImportInput {
 public:
  explicit ImportInput(const std::string& path);
  ~ImportInput();
  std::istream& stream() { return *in_; }

 private:
  std::ifstream file_;
  std::unique_ptr<std::streambuf> buf_;
  std::unique_ptr<std::istream> in_;
};
/// `tuner workers --server ...` and `tuner jobs --server ... [--cancel ID]`
/// (remote_commands.cc; absent without gRPC).
void add_remote_commands(CLI::App& app);

}  // namespace tuner::cli
