// Learning curve of the cost model on recorded tuning runs: for each workload, trains a fresh
// XGBoost model on the first N records (in measurement order) and ranks the records after the
// largest N, as a search would at that point. Prints pairwise accuracy, top-8 recall and how close the best
// of the 32 best-predicted held-out programs comes to the best held-out one (what a round
// of 32 candidates would find). Compares model settings without re-tuning.
//
//   build/bench/costmodel_sim --db A.db --db B.db [--at 64,128,192]
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>

#include "cli/op_common.h"
#include "costmodel/features.h"
#include "costmodel/xgb_model.h"
#include "db/sqlite_database.h"
#include "search/task_tuner.h"
#include "support/error.h"

using namespace tuner;

int main(int argc, char** argv) {
  CLI::App app{"cost-model learning curve on recorded tuning runs"};
  std::vector<std::string> dbs;
  std::vector<int> at{64, 128, 192};
  std::string target = "llvm";
  int pick = 32;
  app.add_option("--db", dbs)->required();
  app.add_option("--at", at)->delimiter(',');
  app.add_option("--pick", pick);
  CLI11_PARSE(app, argc, argv);
  try {
    int test_from = *std::max_element(at.begin(), at.end());
    for (int n : at) {
      double acc = 0, rec = 0, found = 0;
      int runs = 0;
      for (auto& path : dbs) {
        db::SqliteOptions o;
        o.mode = db::OpenMode::ReadOnly;
        auto db = db::SqliteDatabase::open(path, o);
        for (auto& rw : search::replay_records(*db, codegen::Target::parse(target).str(),
                                               cli::rebuild_op_dag)) {
          if (int(rw.costs.size()) < test_from + pick) continue;
          std::vector<std::vector<std::vector<float>>> feats;
          for (auto& s : rw.schedules) feats.push_back(costmodel::extract_store_features(s.state()));
          costmodel::XGBModel model({}, 1);
          model.add_data(rw.workload.hash, {feats.begin(), feats.begin() + n},
                         {rw.costs.begin(), rw.costs.begin() + n});
          model.train();
          std::vector<std::vector<std::vector<float>>> rest(feats.begin() + test_from, feats.end());
          std::vector<double> costs(rw.costs.begin() + test_from, rw.costs.end());
          auto scores = model.predict_features(rest);
          auto m = costmodel::rank_metrics(scores, costs, 8);
          std::vector<size_t> idx(costs.size());
          for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
          std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
          double best_pick = INFINITY;
          for (int i = 0; i < pick; ++i) best_pick = std::min(best_pick, costs[idx[i]]);
          double best = *std::min_element(costs.begin(), costs.end());
          acc += m.pairwise_accuracy;
          rec += m.top_k_recall;
          found += best / best_pick;
          ++runs;
        }
      }
      if (runs)
        fmt::print("N={:<4} runs {:>2}  pairwise {:.3f}  top-8 recall {:.2f}  best-of-{} / best {:.3f}\n", n,
                   runs, acc / runs, rec / runs, pick, found / runs);
    }
  } catch (const UserError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
