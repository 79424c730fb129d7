#include "cli/op_common.h"

#include <fmt/core.h>

#include <fstream>
#include <sstream>

#include "compile/record_lookup.h"
#include "costmodel/random_model.h"
#include "support/error.h"
#include "support/log.h"
#include "support/read_file.h"
#include "support/json.h"

namespace tuner::cli {

void check_local_tuning(const codegen::Target& target) {
  target.check_builds_kernels();  // else the advice below would lead nowhere
  // -emulator=qemu names records an emulated worker made of another architecture's board.
  USER_CHECK(!(target.emulated() && target.runs_on_host()))
      << "-emulator=qemu in '" << target.str() << "' is for boards of another architecture, "
      << "measured under qemu; this machine runs " << target.llvm_arch()
      << " itself: tune without -emulator";
  USER_CHECK(target.runs_on_host() && !target.emulated() && target.host_lacks().empty())
      << "tuning for " << target.str() << " needs a worker on "
      << (target.is_cuda() ? "a GPU host" : "such a machine")
      << ": start `tuner-server`, run `tuner-worker --server HOST:PORT --target=\""
      << target.with_emulator("").str() << "\"` there"
      << (target.llvm_arch() == "aarch64"
              ? " (or on this machine: it then measures under qemu-aarch64, an emulated board "
                "whose records are kept apart)"
              : "")
      << ", and tune with --server HOST:PORT";
}

OpWorkload prepare_op(const std::string& op, const std::vector<std::string>& params,
                      const std::string& target, bool allow_cuda) {
  const ops::OpDef& def = ops::find_op(op);
  ops::Params p = ops::parse_params(def, params);
  te::ComputeDAG dag = def.build(p);
  codegen::Target t = codegen::Target::parse(target);
  USER_CHECK(t.is_llvm() || allow_cuda)
      << "this `tuner op` command runs llvm targets; " << t.str()
      << " kernels are compiled by `tuner op build` (running them needs a GPU worker)";
  return {&def, std::move(p), std::move(dag), std::move(t)};
}

std::optional<te::ComputeDAG> rebuild_dag(const db::Workload& w, const std::vector<te::ComputeDAG>& tasks) {
  for (const auto& t : tasks)
    if (t.hash_hex() == w.hash) return t;
  return compile::rebuild_op_dag(w);
}

ChosenSchedule choose_schedule(const te::ComputeDAG& dag, const codegen::Target& target,
                               const std::string& db_path) {
  auto db = compile::open_db_if_present(db_path);
  return compile::choose_schedule(dag, target, db.get());
}

}  // namespace tuner::cli

namespace tuner::cli {

ChosenSchedule load_trace_schedule(const te::ComputeDAG& dag, const std::string& path) {
  std::string text = read_file_bytes(path, size_t(64) << 20);
  Json j = parse_json(text, false);
  USER_CHECK(!j.is_discarded()) << "trace file " << path << " is not valid JSON (or nested too deeply)";
  // Accept a bare trace or an exported record line carrying one.
  if (j.is_object() && j.contains("trace") && !j.contains("insts")) {
    j = j["trace"].is_string() ? parse_json(j["trace"].get<std::string>(), false) : j["trace"];
  }
  schedule::Trace t;
  try {
    t = schedule::Trace::from_json(j);
  } catch (const UserError& e) {
    USER_ERROR() << "trace file " << path << ": " << e.what();
  }
  try {
    return {schedule::Schedule::replay(dag, t), "trace " + path};
  } catch (const schedule::ScheduleError& e) {
    USER_ERROR() << "trace " << path << " does not apply to this workload: " << e.what();
  }
}

std::unique_ptr<costmodel::CostModel> make_cost_model(const std::string& kind, uint64_t seed,
                                                      bool verbose, costmodel::XGBModel** xgb) {
  *xgb = nullptr;
  if (kind == "random") return std::make_unique<costmodel::RandomModel>(seed);
  USER_CHECK(kind == "xgb") << "unknown cost model '" << kind << "' (expected xgb or random)";
  auto m = std::make_unique<costmodel::XGBModel>(costmodel::XGBOptions{}, seed);
  if (verbose)
    m->on_train = [](const costmodel::RankMetrics& r, int n) {
      fmt::print(stderr,
                 "\ncost model retrained on {} programs: held-out pairwise accuracy {:.3f}, "
                 "top-8 recall {:.2f}\n",
                 n, r.pairwise_accuracy, r.top_k_recall);
    };
  *xgb = m.get();
  return m;
}

void record_failed_run(db::Database& db, int64_t run_id, const Json& progress) {
  try {
    db.update_run(run_id, db::RunState::Failed, progress);
  } catch (const std::exception& e) {
    tuner::log(LogLevel::Info, "warning: the run's failure cannot be recorded: {}", e.what());
  }
}

}  // namespace tuner::cli
