// Each command group registers its subcommands on the `tuner` app.
#pragma once

#include <CLI/CLI.hpp>

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

}  // namespace tuner::cli
