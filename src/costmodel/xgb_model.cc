#include "costmodel/xgb_model.h"

#include <fmt/format.h>

#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "costmodel/features.h"
#include "support/error.h"
#include "support/hash.h"
#include "support/json.h"

namespace tuner::costmodel {

namespace {

void xgb_check(int rc, const char* what) {
  INTERNAL_CHECK(rc == 0) << "XGBoost " << what << " failed: " << XGBGetLastError();
}

// One dense matrix of all rows of the given programs.
DMatrixHandle make_matrix(const std::vector<const std::vector<std::vector<float>>*>& programs,
                          std::vector<size_t>* row_program) {
  std::vector<float> data;
  size_t rows = 0;
  for (size_t p = 0; p < programs.size(); ++p)
    for (auto& r : *programs[p]) {
      INTERNAL_CHECK(r.size() == size_t(kFeaturesPerStore)) << "feature row of size " << r.size();
      data.insert(data.end(), r.begin(), r.end());
      if (row_program) row_program->push_back(p);
      ++rows;
    }
  DMatrixHandle m;
  xgb_check(XGDMatrixCreateFromMat(data.data(), rows, kFeaturesPerStore,
                                   std::numeric_limits<float>::quiet_NaN(), &m),
            "XGDMatrixCreateFromMat");
  return m;
}

}  // namespace

XGBModel::XGBModel(XGBOptions opts, uint64_t seed) : opts_(opts), rng_(seed) {}

XGBModel::~XGBModel() {
  if (booster_) XGBoosterFree(booster_);
}

std::vector<double> XGBModel::normalized_cost(const std::vector<const Program*>& data) const {
  std::map<std::string, double> best;
  for (auto* p : data)
    if (std::isfinite(p->cost)) {
      auto it = best.find(p->workload);
      if (it == best.end() || p->cost < it->second) best[p->workload] = p->cost;
    }
  std::vector<double> y;
  for (auto* p : data) y.push_back(std::isfinite(p->cost) ? p->cost / best[p->workload] : 0.0);
  return y;
}

bool XGBModel::train_on(const std::vector<const Program*>& data) {
  if (int(data.size()) < opts_.min_train_programs) return false;
  // Failed programs say nothing about speed: train on the ones that ran.
  std::vector<const Program*> ok;
  for (auto* p : data)
    if (std::isfinite(p->cost) && !p->rows.empty()) ok.push_back(p);
  if (int(ok.size()) < opts_.min_train_programs) return false;
  std::vector<const std::vector<std::vector<float>>*> rows;
  for (auto* p : ok) rows.push_back(&p->rows);
  std::vector<size_t> row_program;
  DMatrixHandle m = make_matrix(rows, &row_program);
  std::vector<double> y = normalized_cost(ok);
  BoosterHandle b;
  xgb_check(XGBoosterCreate(&m, 1, &b), "XGBoosterCreate");
  auto set = [&](const char* k, const std::string& v) { xgb_check(XGBoosterSetParam(b, k, v.c_str()), k); };
  set("max_depth", std::to_string(opts_.max_depth));
  set("eta", std::to_string(opts_.eta));
  set("min_child_weight", "2");
  set("gamma", "0.0001");
  set("nthread", std::to_string(opts_.threads));
  set("seed", std::to_string(rng_.next() & 0x7fffffff));
  set("verbosity", "0");
  set("base_score", "0");
  set("tree_method", "hist");  // much faster than exact on our small dense matrices
  std::vector<float> grad(row_program.size()), hess(row_program.size());
  std::vector<double> sums(ok.size());
  for (int it = 0; it < opts_.rounds; ++it) {
    bst_ulong n = 0;
    const float* pred = nullptr;
    if (it == 0) {
      std::fill(sums.begin(), sums.end(), 0.0);
    } else {
      xgb_check(XGBoosterPredict(b, m, 1, 0, 1, &n, &pred), "XGBoosterPredict");
      std::fill(sums.begin(), sums.end(), 0.0);
      for (size_t r = 0; r < n; ++r) sums[row_program[r]] += pred[r];
    }
    // Pack-sum squared relative error: every store of a program shares its program's
    // gradient, weighted 1 / y^2 so that a 10% miss counts alike for fast and slow programs
    // (plain squared error let the 10-70x slower ones dominate; 1 / y still leaned on them).
    for (size_t r = 0; r < row_program.size(); ++r) {
      size_t p = row_program[r];
      double w = 1.0 / (y[p] * y[p]);
      grad[r] = float(2 * w * (sums[p] - y[p]));
      hess[r] = float(2 * w);
    }
    xgb_check(XGBoosterBoostOneIter(b, m, grad.data(), hess.data(), grad.size()), "XGBoosterBoostOneIter");
  }
  XGDMatrixFree(m);
  if (booster_) XGBoosterFree(booster_);
  booster_ = b;
  return true;
}

bool XGBModel::train() {
  std::vector<const Program*> data;
  for (auto& p : programs_) data.push_back(&p);
  if (!train_on(data)) return false;
  trained_on_ = programs_.size();
  if (on_train) on_train(evaluate_holdout(0.2, 8, rng_.next()), int(programs_.size()));
  return true;
}

std::vector<double> XGBModel::predict_features(const std::vector<Features>& programs) {
  std::vector<const Features*> rows;
  for (auto& p : programs) rows.push_back(&p);
  return predict_rows(rows);
}

std::vector<double> XGBModel::predict_rows(const std::vector<const Features*>& rows) {
  std::vector<double> out(rows.size(), 0.0);
  if (!booster_) {
    for (auto& x : out) x = rng_.uniform();  // nothing learned yet: a random ranking
    return out;
  }
  bool any = false;
  for (auto* p : rows) any |= !p->empty();
  if (!any) return out;
  std::vector<size_t> row_program;
  DMatrixHandle m = make_matrix(rows, &row_program);
  bst_ulong n = 0;
  const float* pred = nullptr;
  xgb_check(XGBoosterPredict(booster_, m, 1, 0, 0, &n, &pred), "XGBoosterPredict");
  // The model predicts cost (stores add up); a higher score means faster.
  for (size_t r = 0; r < n; ++r) out[row_program[r]] -= pred[r];
  XGDMatrixFree(m);
  return out;
}

std::vector<const XGBModel::Features*> XGBModel::features_of(
    const te::ComputeDAG& dag, const std::vector<const schedule::State*>& states) {
  // Emptied before, never during, a batch: the result points into the cache.
  if (feature_cache_.size() + states.size() > opts_.feature_cache) feature_cache_.clear();
  const std::string prefix = dag.hash_hex() + "\n";
  std::vector<const Features*> out;
  out.reserve(states.size());
  for (auto* s : states) {
    auto [it, inserted] = feature_cache_.try_emplace(fnv1a64(prefix + s->str()));
    if (inserted) it->second = extract_store_features(*s);
    out.push_back(&it->second);
  }
  return out;
}

std::vector<double> XGBModel::predict(const te::ComputeDAG& dag,
                                      const std::vector<const schedule::State*>& states) {
  return predict_rows(features_of(dag, states));
}

void XGBModel::add_data(const std::string& workload,
                        std::vector<std::vector<std::vector<float>>> programs,
                        const std::vector<double>& costs) {
  for (size_t i = 0; i < programs.size(); ++i)
    programs_.push_back({workload, std::move(programs[i]), costs[i]});
}

void XGBModel::update(const te::ComputeDAG& dag, const std::vector<const schedule::State*>& states,
                      const std::vector<double>& costs) {
  std::vector<Features> programs;
  for (const Features* f : features_of(dag, states)) programs.push_back(*f);
  add_data(dag.hash_hex(), std::move(programs), costs);
  if (double(programs_.size()) >= opts_.retrain_growth * double(std::max<size_t>(trained_on_, 1)) &&
      int(programs_.size()) >= opts_.min_train_programs)
    train();
}

RankMetrics rank_metrics(const std::vector<double>& scores, const std::vector<double>& costs, int k) {
  RankMetrics m;
  m.programs = int(scores.size());
  int64_t pairs = 0, right = 0;
  for (size_t i = 0; i < scores.size(); ++i)
    for (size_t j = i + 1; j < scores.size(); ++j) {
      if (costs[i] == costs[j]) continue;
      ++pairs;
      bool faster_i = costs[i] < costs[j];
      right += faster_i == (scores[i] > scores[j]);
    }
  m.pairwise_accuracy = pairs ? double(right) / double(pairs) : 0;
  std::vector<size_t> by_cost(costs.size()), by_score(costs.size());
  std::iota(by_cost.begin(), by_cost.end(), 0);
  std::iota(by_score.begin(), by_score.end(), 0);
  std::stable_sort(by_cost.begin(), by_cost.end(), [&](size_t a, size_t b) { return costs[a] < costs[b]; });
  std::stable_sort(by_score.begin(), by_score.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  int kk = std::min<int>(k, int(costs.size()));
  int hit = 0;
  for (int a = 0; a < kk; ++a)
    for (int b = 0; b < kk; ++b) hit += by_cost[a] == by_score[b];
  m.top_k_recall = kk ? double(hit) / kk : 0;
  return m;
}

RankMetrics XGBModel::evaluate(const std::string&,
                               const std::vector<std::vector<std::vector<float>>>& programs,
                               const std::vector<double>& costs, int k) {
  return rank_metrics(predict_features(programs), costs, k);
}

RankMetrics XGBModel::evaluate_holdout(double share, int k, uint64_t seed) {
  Rng r(seed);
  std::vector<const Program*> train_set, test_set;
  for (auto& p : programs_) (r.bernoulli(share) ? test_set : train_set).push_back(&p);
  RankMetrics total;
  if (test_set.empty()) return total;
  XGBModel probe(opts_, seed);
  if (!probe.train_on(train_set)) return total;
  // Rank within each workload, then average weighted by the number of programs.
  std::map<std::string, std::vector<const Program*>> by_wl;
  for (auto* p : test_set)
    if (std::isfinite(p->cost)) by_wl[p->workload].push_back(p);
  double acc = 0, rec = 0;
  int n = 0;
  for (auto& [wl, ps] : by_wl) {
    if (ps.size() < 2) continue;
    std::vector<std::vector<std::vector<float>>> feats;
    std::vector<double> costs;
    for (auto* p : ps) {
      feats.push_back(p->rows);
      costs.push_back(p->cost);
    }
    RankMetrics m = rank_metrics(probe.predict_features(feats), costs, k);
    acc += m.pairwise_accuracy * double(ps.size());
    rec += m.top_k_recall * double(ps.size());
    n += int(ps.size());
  }
  if (n) {
    total.pairwise_accuracy = acc / n;
    total.top_k_recall = rec / n;
  }
  total.programs = n;
  return total;
}

std::string XGBModel::save() const {
  USER_CHECK(booster_) << "the cost model is not trained yet";
  bst_ulong len = 0;
  const char* buf = nullptr;
  xgb_check(XGBoosterSaveModelToBuffer(booster_, R"({"format": "json"})", &len, &buf), "save");
  std::string body(buf, len);
  // XGBoost trusts the trees it loads (a damaged child index crashes or loops it): the
  // checksum lets load refuse a damaged blob first.
  Json header{{"kind", "xgboost"},
              {"feature_version", kFeatureVersion},
              {"checksum", fmt::format("{:016x}", checksum64(body))}};
  return header.dump() + "\n" + body;
}

void XGBModel::load(const std::string& blob) {
  auto nl = blob.find('\n');
  USER_CHECK(nl != std::string::npos) << "not a saved cost model";
  Json header = parse_json(blob.substr(0, nl), false);
  auto field = [&](const char* key) {
    return header.is_object() && header.contains(key) ? header[key] : Json();
  };
  USER_CHECK(field("kind") == "xgboost") << "not a saved XGBoost cost model";
  Json v = field("feature_version");
  USER_CHECK(v == kFeatureVersion) << "the cost model was trained on features of version "
                                   << (v.is_null() ? "?" : v.dump()) << ", this Tuner extracts version "
                                   << kFeatureVersion;
  std::string_view body(blob.data() + nl + 1, blob.size() - nl - 1);
  Json sum = field("checksum");  // absent in models saved before it existed
  USER_CHECK(sum.is_null() || sum == fmt::format("{:016x}", checksum64(body)))
      << "the saved cost model is damaged (its checksum does not match)";
  BoosterHandle b;
  xgb_check(XGBoosterCreate(nullptr, 0, &b), "XGBoosterCreate");
  if (XGBoosterLoadModelFromBuffer(b, body.data(), body.size()) != 0) {
    std::string why = XGBGetLastError();
    XGBoosterFree(b);
    USER_ERROR() << "the saved cost model is damaged: XGBoost cannot load it ("
                 << why.substr(0, why.find('\n')) << ")";
  }
  if (booster_) XGBoosterFree(booster_);
  booster_ = b;
}

}  // namespace tuner::costmodel
