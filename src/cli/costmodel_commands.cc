// `tuner costmodel eval --target T [--model M.onnx]`: ranks the database's measured records of
// every workload with the saved cost model of that target and reports pairwise accuracy and
// top-k recall. A model's tasks are rebuilt from the model: the database holds only their hash.
#include <fmt/format.h>

#include <cmath>
#include <set>

#include "cli/commands.h"
#include "cli/model_common.h"
#include "cli/op_common.h"
#include "codegen/target.h"
#include "costmodel/features.h"
#include "costmodel/xgb_model.h"
#include "db/sqlite_database.h"
#include "graph/tasks.h"
#include "search/task_tuner.h"
#include "support/cli_main.h"
#include "support/error.h"
#include "support/json.h"

namespace tuner::cli {

namespace {

struct EvalArgs {
  std::string target = "llvm";
  std::string db = "tuning_logs/tuning.db";
  int k = 8;
  bool json = false;
  std::vector<std::string> models;
};

// The DAGs of the tasks of `models` (tuned with the default passes).
std::vector<te::ComputeDAG> model_task_dags(const EvalArgs& a) {
  std::vector<te::ComputeDAG> dags;
  for (const std::string& path : a.models) {
    ModelArgs m;
    m.model = path;
    m.target = a.target;
    for (auto& t : graph::extract_tasks(load_model(m), graph::FuseOptions{}).tasks) dags.push_back(t.dag);
  }
  return dags;
}

void cmd_eval(const EvalArgs& a) {
  std::string target = codegen::Target::parse(a.target).str();
  db::SqliteOptions o;
  o.mode = db::OpenMode::ReadOnly;
  auto db = db::SqliteDatabase::open(a.db, o);
  auto blob = db->load_cost_model(target, costmodel::kFeatureVersion, "xgboost");
  USER_CHECK(blob) << "no saved cost model for " << target << " (feature version "
                   << costmodel::kFeatureVersion << ") in " << a.db
                   << "; `tuner tune` and `tuner op tune` save one when they have trained";
  costmodel::XGBModel model;
  try {
    model.load(blob->blob);
  } catch (const UserError& e) {
    USER_ERROR() << "the saved cost model for " << target << " in " << a.db
                 << " cannot be loaded: " << e.what();
  }

  Json rows = Json::array();
  double acc = 0, rec = 0;
  int n = 0;
  auto tasks = model_task_dags(a);
  auto replayed =
      search::replay_records(*db, target, [&](const db::Workload& w) { return rebuild_dag(w, tasks); });
  for (auto& rw : replayed) {
    if (rw.costs.size() < 2) continue;
    std::vector<std::vector<std::vector<float>>> feats;
    for (auto& s : rw.schedules) feats.push_back(costmodel::extract_store_features(s.state()));
    auto m = costmodel::rank_metrics(model.predict_features(feats), rw.costs, a.k);
    double cnt = double(rw.costs.size());
    acc += m.pairwise_accuracy * cnt;
    rec += m.top_k_recall * cnt;
    n += int(rw.costs.size());
    rows.push_back({{"workload", rw.workload.hash}, {"op", rw.workload.op}, {"records", rw.costs.size()},
                    {"pairwise_accuracy", m.pairwise_accuracy}, {"top_k_recall", m.top_k_recall}});
    if (!a.json && rows.size() == 1)
      fmt::print("{:<18} {:<28} {:>8} {:>10} {:>8}\n", "WORKLOAD", "OP", "RECORDS", "PAIRWISE", "TOP-K");
    if (!a.json)
      fmt::print("{:<18} {:<28} {:>8} {:>10.3f} {:>8.2f}\n", rw.workload.hash, rw.workload.op,
                 rw.costs.size(), m.pairwise_accuracy, m.top_k_recall);
  }
  if (n == 0) {
    // Records of a model's tasks name only the task's hash: without the model they cannot be
    // replayed. Say so rather than "no records".
    std::set<int64_t> measured;
    for (auto& r : db->ok_records(target)) measured.insert(r.workload_id);
    size_t lost = measured.size() - replayed.size();
    USER_CHECK(lost == 0) << lost << " of the " << measured.size() << " workloads of " << target
                          << " measured in " << a.db << " could not be rebuilt"
                          << (a.models.empty() ? ": tasks of a model need --model MODEL.onnx"
                                               : " (tasks of another model?)");
    USER_ERROR() << "no workload of " << target << " in " << a.db << " has two usable records";
  }
  if (a.json) {
    fmt::print("{}\n", Json{{"target", target}, {"model_records", blob->num_records}, {"k", a.k},
                            {"pairwise_accuracy", acc / n}, {"top_k_recall", rec / n}, {"workloads", rows}}
                           .dump());
  } else {
    fmt::print("all ({} records, model trained on {}): pairwise accuracy {:.3f}, top-{} recall {:.2f}\n",
               n, blob->num_records, acc / n, a.k, rec / n);
    fmt::print("(records the model was trained on are included: this measures fit, not generalization)\n");
  }
}

}  // namespace

void add_costmodel_commands(CLI::App& app) {
  auto* cm = app.add_subcommand("costmodel", "the learned cost model");
  cm->require_subcommand(1);
  static EvalArgs a;
  auto* eval = cm->add_subcommand("eval", "rank the database's records with the saved model of a target");
  eval->add_option("--target", a.target, "target whose model and records to use")->capture_default_str();
  eval->add_option("--db", a.db, "tuning database")->capture_default_str();
  eval->add_option("-k", a.k, "k of the top-k recall")
      ->transform(number_in(1, 1e6))
      ->capture_default_str();
  eval->add_flag("--json", a.json, "print one JSON object");
  eval->add_option("--model", a.models, "ONNX model whose tuned tasks to include (repeatable)")
      ->check(CLI::ExistingFile);
  eval->callback([] { cmd_eval(a); });
}

}  // namespace tuner::cli
