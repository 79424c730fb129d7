// The `tuner` command. Errors from the user's input (arguments included) print one line and
// exit 1; an internal error (a Tuner bug) prints one line and exits 2 (support/cli_main.h).
#include <fmt/core.h>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "support/cli_main.h"
#include "support/error.h"
#include "support/log.h"

#ifndef TUNER_HAVE_GRPC
void tuner::cli::remote_tune(const RemoteTuneArgs&) {
  USER_ERROR() << "this tuner was built without gRPC: --server is not available";
}
void tuner::cli::remote_db(const std::string&, const RemoteDbArgs&) {
  USER_ERROR() << "this tuner was built without gRPC: --server is not available";
}
#endif

int main(int argc, char** argv) {
  CLI::App app{"tuner: an autotuning tensor-operator compiler"};
  app.set_version_flag("--version", std::string("tuner ") + TUNER_VERSION);
  app.require_subcommand(1);
  // -v and -q also after the subcommand (`tuner compile m.onnx -q`): set when parsed, before
  // the subcommand's callback runs; a subcommand's own --quiet (tune) is matched first.
  app.fallthrough();
  app.add_flag_callback("-v,--verbose", [] { tuner::log_level() = tuner::LogLevel::Debug; }, "more output")
      ->trigger_on_parse();
  app.add_flag_callback("-q,--quiet", [] { tuner::log_level() = tuner::LogLevel::Quiet; }, "less output")
      ->trigger_on_parse();
  tuner::cli::add_model_tune_command(app);
  tuner::cli::add_report_command(app);
  tuner::cli::add_model_commands(app);
  tuner::cli::add_op_commands(app);
  tuner::cli::add_db_commands(app);
  tuner::cli::add_costmodel_commands(app);
#ifdef TUNER_HAVE_GRPC
  tuner::cli::add_remote_commands(app);
#endif
  return tuner::run_command_line(app, argc, argv);  // the subcommands run from its callbacks
}
