#include "cli/model_common.h"

#include "cli/commands.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include "codegen/target.h"
#include "compile/compile_model.h"
#include "graph/onnx_import.h"
#include "graph/passes.h"
#include "ops/host_tensor.h"
#include "runtime/executor.h"
#include "support/rng.h"

namespace tuner::cli {

void add_model_options(CLI::App* cmd, ModelArgs& a) {
  cmd->add_option("model", a.model, "the ONNX model")->required();
  cmd->add_option("--target", a.target, "compilation target")->capture_default_str();
  cmd->add_option("--input-shape", a.input_shapes,
                  "fix a dynamic input shape, NAME:1x3x224x224 (repeatable)");
  cmd->add_flag("--no-fuse", a.no_fuse, "one kernel per operator (debugging)");
  cmd->add_flag("--winograd,!--no-winograd", a.winograd,
                "3x3 stride-1 convs with 64+ channels as Winograd F(4x4,3x3) (default on; "
                "--no-winograd: direct convs)");
}

void add_remote_options(CLI::App* cmd, RemoteOptions& o, std::vector<std::string> local_only) {
  // A local tuning option given with --server would be ignored without a word.
  cmd->parse_complete_callback([cmd, &o, local_only] {
    if (o.server.empty()) return;
    for (const auto& name : local_only)
      if (const CLI::Option* opt = cmd->get_option_no_throw(name); opt && opt->count() > 0)
        USER_ERROR() << name << " is for a local tune: with --server the server searches, its "
                     << "workers measure and its database keeps the records; drop " << name;
  });
  cmd->add_option("--server", o.server, "tune on a tuner-server (HOST:PORT) and its workers");
  cmd->add_option("--token-file", o.token_file, "the client token of --server");
  cmd->add_option("--tls-ca", o.tls_ca, "CA certificate (PEM) of a TLS server");
  cmd->add_flag("--cancel-on-exit", o.cancel_on_exit,
                "with --server: Ctrl-C cancels the job (default: detach, the job goes on)");
}

graph::Graph load_model(const ModelArgs& a, bool print) {
  graph::ImportOptions io;
  for (const auto& s : a.input_shapes) graph::parse_input_shape(s, io);
  graph::Graph g = graph::import_onnx(a.model, io);
  graph::PassOptions po = compile::pass_options_for(codegen::Target::parse(a.target));
  po.winograd = a.winograd;
  if (print)
    po.on_change = [](const std::string& pass, const graph::Graph& gr) {
      fmt::print("=== after {}\n{}\n", pass, gr.str());
    };
  graph::run_passes(g, po);
  return g;
}

ops::HostTensor random_input(const runtime::Executor& ex, size_t i, Rng& rng) {
  const auto& d = ex.input_desc(i);
  te::DataType t = te::DataType::parse(d.dtype);
  if (t.is_float()) return ops::HostTensor::random(d.shape, t, rng);
  // Integers (token ids, indices) 0 or 1, or only 0 when they index a dimension of size 1:
  // within the plan's index checks.
  return ops::HostTensor::random(d.shape, t, rng, 0, ex.index_limit(i) == 1 ? 0 : 1);
}

void set_random_inputs(runtime::Executor& ex) {
  Rng rng(0);
  for (size_t i = 0; i < ex.num_inputs(); ++i) {
    ops::HostTensor x = random_input(ex, i, rng);
    ex.set_input(i, x.raw(), x.bytes());
  }
}

void run_in_turn(const std::vector<runtime::Executor*>& exs, const std::function<bool()>& more,
                 const std::function<void(size_t, double)>& on_run) {
  // The first run of a block (the other pool's threads still spinning, caches cold) is not
  // timed; which executor goes first alternates between rounds.
  for (size_t round = 0; more(); ++round)
    for (size_t i = 0; i < exs.size(); ++i) {
      size_t k = (i + round) % exs.size();
      exs[k]->run();
      for (int r = 0; r < kTimedRunsPerTurn; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        exs[k]->run();
        on_run(k, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
    }
}

std::vector<TurnLatency> measure_latencies(std::vector<runtime::Artifact> arts, int threads,
                                           int min_runs, double min_seconds) {
  std::vector<std::unique_ptr<runtime::Executor>> owned;
  std::vector<runtime::Executor*> exs;
  for (auto& art : arts) {
    owned.push_back(std::make_unique<runtime::Executor>(std::move(art), threads));
    set_random_inputs(*owned.back());
    exs.push_back(owned.back().get());
  }
  std::vector<std::vector<double>> times(exs.size());
  double total = 0;
  run_in_turn(
      exs,
      [&] {
        return times[0].size() < 1000 && (int(times[0].size()) < min_runs || total < min_seconds);
      },
      [&](size_t k, double s) {
        times[k].push_back(s);
        total += s / double(exs.size());
      });
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::vector<TurnLatency> out(times.size());
  for (size_t k = 0; k < times.size(); ++k) {
    const auto& t = times[k];  // in run order: round r holds runs [r * n, (r + 1) * n)
    for (size_t at = 0; at + kTimedRunsPerTurn <= t.size(); at += kTimedRunsPerTurn)
      out[k].per_round.push_back(
          median({t.begin() + long(at), t.begin() + long(at + kTimedRunsPerTurn)}));
    out[k].median = median(t);
  }
  return out;
}

std::optional<std::pair<double, double>> ratio_range(const TurnLatency& a, const TurnLatency& b) {
  size_t n = std::min(a.per_round.size(), b.per_round.size());
  if (n < 5) return std::nullopt;
  std::vector<double> r;
  for (size_t i = 0; i < n; ++i) r.push_back(a.per_round[i] / b.per_round[i]);
  std::sort(r.begin(), r.end());
  return std::pair(r[n / 10], r[n - 1 - n / 10]);
}

double measure_latency(runtime::Artifact art, int threads, int min_runs, double min_seconds) {
  std::vector<runtime::Artifact> one;
  one.push_back(std::move(art));
  return measure_latencies(std::move(one), threads, min_runs, min_seconds)[0].median;
}

std::string human_bytes(int64_t b) {
  if (b >= (int64_t(1) << 20)) return fmt::format("{:.1f} MiB", double(b) / double(1 << 20));
  if (b >= 1024) return fmt::format("{:.1f} KiB", double(b) / 1024.0);
  return fmt::format("{} B", b);
}

}  // namespace tuner::cli
