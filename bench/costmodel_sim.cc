// Learning curve of the cost model on recorded tuning runs: for each workload, trains a fresh
// XGBoost model on the first N records (in measurement order) and ranks the records after the
// largest N, as a search would at that point. Prints pairwise accuracy, top-8 recall and how
// close the best of the `--pick` best-predicted held-out programs comes to the best held-out
// one (what a round of that many candidates would find). Compares model settings without
// re-tuning.
//
//   build/bench/costmodel_sim --db A.db --db B.db [--at 64,128,192] [--pick 32]
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <numeric>

#include "cli/op_common.h"
#include "compile/record_lookup.h"
#include "costmodel/features.h"
#include "costmodel/xgb_model.h"
#include "db/sqlite_database.h"
#include "search/task_tuner.h"
#include "support/error.h"

using namespace tuner;

namespace {

struct Run {
  std::string workload;
  std::vector<std::vector<std::vector<float>>> features;  // per record, in measurement order
  std::vector<double> costs;
};

struct Sums {
  double accuracy = 0, recall = 0, found = 0;
  int runs = 0;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cost-model learning curve on recorded tuning runs"};
  std::vector<std::string> dbs;
  std::vector<int> at{64, 128, 192};
  std::string target = "llvm";
  int pick = 32;
  app.add_option("--db", dbs)->required();
  app.add_option("--at", at)->delimiter(',');
  app.add_option("--pick", pick);
  app.add_option("--target", target);
  CLI11_PARSE(app, argc, argv);
  try {
    USER_CHECK(!at.empty() && *std::min_element(at.begin(), at.end()) > 0) << "--at needs positive counts";
    const size_t test_from = size_t(*std::max_element(at.begin(), at.end()));
    // Features are extracted once per run; every N trains on a prefix of them.
    std::vector<Run> runs;
    for (auto& path : dbs) {
      db::SqliteOptions o;
      o.mode = db::OpenMode::ReadOnly;
      auto db = db::SqliteDatabase::open(path, o);
      for (auto& rw : search::replay_records(*db, codegen::Target::parse(target).str(), compile::rebuild_op_dag)) {
        if (rw.costs.size() < test_from + size_t(pick)) continue;
        Run r{rw.workload.hash, {}, rw.costs};
        for (auto& s : rw.schedules) r.features.push_back(costmodel::extract_store_features(s.state()));
        runs.push_back(std::move(r));
      }
    }
    USER_CHECK(!runs.empty()) << "no workload has " << test_from + size_t(pick) << " usable records";
    for (int n : at) {
      Sums sum;
      for (auto& r : runs) {
        costmodel::XGBModel model({}, 1);
        model.add_data(r.workload, {r.features.begin(), r.features.begin() + n},
                       {r.costs.begin(), r.costs.begin() + n});
        model.train();
        std::vector<std::vector<std::vector<float>>> held(r.features.begin() + long(test_from), r.features.end());
        std::vector<double> costs(r.costs.begin() + long(test_from), r.costs.end());
        auto scores = model.predict_features(held);
        auto m = costmodel::rank_metrics(scores, costs, 8);
        std::vector<size_t> idx(costs.size());
        std::iota(idx.begin(), idx.end(), size_t(0));
        std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
        double best_pick = INFINITY;
        for (int i = 0; i < pick; ++i) best_pick = std::min(best_pick, costs[idx[size_t(i)]]);
        sum.accuracy += m.pairwise_accuracy;
        sum.recall += m.top_k_recall;
        sum.found += *std::min_element(costs.begin(), costs.end()) / best_pick;
        ++sum.runs;
      }
      fmt::print("N={:<4} runs {:>2}  pairwise {:.3f}  top-8 recall {:.2f}  best-of-{} / best {:.3f}\n", n,
                 sum.runs, sum.accuracy / sum.runs, sum.recall / sum.runs, pick, sum.found / sum.runs);
    }
  } catch (const UserError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
