// `tuner costmodel eval --target T`: ranks the database's measured records of every workload
// with the saved cost model of that target and reports pairwise accuracy and top-k recall.
#include <fmt/format.h>

#include <cmath>

#include "cli/commands.h"
#include "cli/op_common.h"
#include "codegen/target.h"
#include "costmodel/features.h"
#include "costmodel/xgb_model.h"
#include "db/sqlite_database.h"
#include "support/error.h"
#include "support/json.h"

namespace tuner::cli {

namespace {

struct EvalArgs {
  std::string target = "llvm";
  std::string db = "tuning_logs/tuning.db";
  int k = 8;
  bool json = false;
};

void cmd_eval(const EvalArgs& a) {
  std::string target = codegen::Target::parse(a.target).str();
  db::SqliteOptions o;
  o.mode = db::OpenMode::ReadOnly;
  auto db = db::SqliteDatabase::open(a.db, o);
  auto blob = db->load_cost_model(target, costmodel::kFeatureVersion, "xgboost");
  USER_CHECK(blob) << "no saved cost model for " << target << " (feature version "
                   << costmodel::kFeatureVersion << ") in " << a.db
                   << "; `tuner op tune` saves one when it has trained";
  costmodel::XGBModel model;
  model.load(blob->blob);

  std::map<int64_t, std::vector<db::Record>> by_workload;
  for (auto& r : db->ok_records(target)) by_workload[r.workload_id].push_back(std::move(r));
  Json rows = Json::array();
  double acc = 0, rec = 0;
  int n = 0;
  if (!a.json)
    fmt::print("{:<18} {:<10} {:>8} {:>10} {:>8}\n", "WORKLOAD", "OP", "RECORDS", "PAIRWISE", "TOP-K");
  for (auto& [wid, recs] : by_workload) {
    auto w = db->workload(wid);
    auto dag = w ? rebuild_op_dag(*w) : std::nullopt;
    if (!dag || recs.size() < 2) continue;
    std::vector<std::vector<std::vector<float>>> feats;
    std::vector<double> costs;
    for (auto& r : recs) {
      try {
        auto s = schedule::Schedule::replay(*dag, schedule::Trace::from_json(Json::parse(r.trace)));
        feats.push_back(costmodel::extract_store_features(s.state()));
        costs.push_back(*r.median);
      } catch (const std::exception&) {
      }
    }
    if (costs.size() < 2) continue;
    auto m = costmodel::rank_metrics(model.predict_features(feats), costs, a.k);
    acc += m.pairwise_accuracy * double(costs.size());
    rec += m.top_k_recall * double(costs.size());
    n += int(costs.size());
    rows.push_back({{"workload", w->hash}, {"op", w->op}, {"records", costs.size()},
                    {"pairwise_accuracy", m.pairwise_accuracy}, {"top_k_recall", m.top_k_recall}});
    if (!a.json)
      fmt::print("{:<18} {:<10} {:>8} {:>10.3f} {:>8.2f}\n", w->hash, w->op, costs.size(),
                 m.pairwise_accuracy, m.top_k_recall);
  }
  USER_CHECK(n > 0) << "no workload of " << target << " in " << a.db << " has two usable records";
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
  eval->add_option("-k", a.k, "k of the top-k recall")->capture_default_str();
  eval->add_flag("--json", a.json, "print one JSON object");
  eval->callback([] { cmd_eval(a); });
}

}  // namespace tuner::cli
