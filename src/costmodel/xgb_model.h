// The learned cost model: gradient-boosted trees (XGBoost through its C API) over per-store
// features. A program's predicted cost is the sum of its stores' predictions ("pack-sum", as
// in Ansor), trained with a custom objective: squared relative error between that sum and the
// program's normalized cost (its cost / the best cost of its workload). Unlike Ansor we fit
// cost rather than throughput: cost adds up over stores, throughput does not (a program with
// more stores would look faster). The score is the negated predicted cost.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "costmodel/cost_model.h"
#include "support/rng.h"

namespace tuner::costmodel {

struct XGBOptions {
  /// Boosting rounds per training.
  int rounds = 80;
  int max_depth = 10;
  double eta = 0.2;
  /// Retrain when the data has grown by this factor since the last training.
  double retrain_growth = 1.2;
  /// Train only once there are this many measured programs.
  int min_train_programs = 32;
  /// Threads XGBoost may use. One: our matrices are small, and OpenMP's spinning threads
  /// made training 400x slower when the cores were shared (17 s vs 0.045 s measured).
  int threads = 1;
  /// Candidates whose features are remembered (~1 KB each for a conv); emptied when full.
  size_t feature_cache = 20000;
};

/// Ranking quality on a set of programs.
struct RankMetrics {
  double pairwise_accuracy = 0;  // share of pairs (same workload) ordered correctly
  double top_k_recall = 0;       // share of the true top-k found in the predicted top-k
  int programs = 0;
};

class XGBModel : public CostModel {
 public:
  explicit XGBModel(XGBOptions opts = {}, uint64_t seed = 0);
  ~XGBModel() override;
  XGBModel(const XGBModel&) = delete;
  XGBModel& operator=(const XGBModel&) = delete;

  std::vector<double> predict(const te::ComputeDAG& dag,
                              const std::vector<const schedule::State*>& states) override;
  void update(const te::ComputeDAG& dag, const std::vector<const schedule::State*>& states,
              const std::vector<double>& costs) override;

  /// Predicted scores of programs given as per-store features.
  std::vector<double> predict_features(const std::vector<std::vector<std::vector<float>>>& programs);
  /// Adds measured programs (per-store features) of one workload, without retraining.
  void add_data(const std::string& workload, std::vector<std::vector<std::vector<float>>> programs,
                const std::vector<double>& costs);
  /// Trains on all data now (no-op without enough data). Returns false when untrained.
  bool train();
  bool trained() const { return booster_ != nullptr; }
  size_t num_programs() const { return programs_.size(); }

  /// Holds out `share` of the programs (by seeded draw), trains on the rest and ranks them.
  RankMetrics evaluate_holdout(double share, int k, uint64_t seed);
  /// Ranking quality of the current model on the given workload's programs.
  RankMetrics evaluate(const std::string& workload,
                       const std::vector<std::vector<std::vector<float>>>& programs,
                       const std::vector<double>& costs, int k);

  /// The trained model as bytes, tagged with the feature version.
  std::string save() const;
  /// Loads a saved model; a model of another feature version is a UserError.
  void load(const std::string& blob);

  /// Called after each training with metrics on a held-out part (for --verbose output).
  std::function<void(const RankMetrics&, int programs)> on_train;

 private:
  struct Program {
    std::string workload;
    std::vector<std::vector<float>> rows;
    double cost;  // seconds; infinity when it failed
  };
  using Features = std::vector<std::vector<float>>;
  /// The features of a batch of states, remembered by DAG and state: the search scores the
  /// same states round after round, and lowering them again (Winograd's especially)
  /// dominated its time. The pointers stay valid until the next call.
  std::vector<const Features*> features_of(const te::ComputeDAG& dag,
                                           const std::vector<const schedule::State*>& states);
  std::vector<double> predict_rows(const std::vector<const Features*>& programs);
  bool train_on(const std::vector<const Program*>& data);
  std::vector<double> normalized_cost(const std::vector<const Program*>& data) const;

  XGBOptions opts_;
  Rng rng_;
  void* booster_ = nullptr;
  std::vector<Program> programs_;
  size_t trained_on_ = 0;
  std::unordered_map<uint64_t, Features> feature_cache_;  // by DAG and state
};

/// Pairwise accuracy and top-k recall of predicted scores against measured costs.
RankMetrics rank_metrics(const std::vector<double>& scores, const std::vector<double>& costs, int k);

}  // namespace tuner::costmodel
