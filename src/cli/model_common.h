// What the whole-model commands share: loading a model with its passes, the common options,
// and timing a compiled model.
#pragma once

#include "support/rng.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "graph/graph.h"
#include "runtime/artifact.h"
#include "runtime/executor.h"

namespace tuner::cli {

struct ModelArgs {
  std::string model;
  std::string target = "llvm";
  std::vector<std::string> input_shapes;
  bool no_fuse = false;
  bool winograd = true;
};

/// The model path and --target, --input-shape, --no-fuse.
void add_model_options(CLI::App* cmd, ModelArgs& a);

/// Imports the model and runs the graph passes; `print` shows the graph after each pass.
graph::Graph load_model(const ModelArgs& a, bool print = false);

/// Fills the executor's inputs with seeded random values (integer inputs 0 or 1: valid ids).
void set_random_inputs(runtime::Executor& ex);
/// Seeded random data for input i (integer inputs 0 or 1, within the plan's index checks).
ops::HostTensor random_input(const runtime::Executor& ex, size_t i, Rng& rng);

/// Timed runs per executor in each round of run_in_turn.
inline constexpr int kTimedRunsPerTurn = 5;
/// Runs the executors in turn, in blocks of kTimedRunsPerTurn timed runs after an untimed one
/// (so a change of machine load hits them alike), calling on_run(index, seconds) after each
/// timed run, while more() says so (asked before each round).
void run_in_turn(const std::vector<runtime::Executor*>& exs, const std::function<bool()>& more,
                 const std::function<void(size_t, double)>& on_run);

/// Median latency (seconds) of an artifact on random inputs: at least `min_runs` runs and
/// about `min_seconds` of running.
double measure_latency(runtime::Artifact art, int threads, int min_runs = 10,
                       double min_seconds = 0.5);
/// One artifact's latencies measured in turn with others.
struct TurnLatency {
  double median = 0;              // seconds, over every timed run
  std::vector<double> per_round;  // the median of each round's block of runs
};
/// Latencies of several artifacts measured in turn (blocks of runs interleaved), so their
/// ratio holds on a machine whose load changes: for before/after comparisons.
std::vector<TurnLatency> measure_latencies(std::vector<runtime::Artifact> arts, int threads,
                                           int min_runs = 10, double min_seconds = 0.5);
/// The 10th and 90th percentiles over rounds of a's round median / b's (a paired ratio: both
/// ran in the same round, under the same load); nullopt with fewer than 5 rounds.
std::optional<std::pair<double, double>> ratio_range(const TurnLatency& a, const TurnLatency& b);

/// "3.2 MiB".
std::string human_bytes(int64_t b);

}  // namespace tuner::cli
