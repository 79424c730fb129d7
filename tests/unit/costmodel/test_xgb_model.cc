#include <gtest/gtest.h>

#include "costmodel/features.h"
#include "costmodel/xgb_model.h"
#include "ops/registry.h"
#include "schedule/schedule.h"
#include "support/error.h"

using namespace tuner;
using namespace tuner::costmodel;

namespace {

// Synthetic programs: one or two stores with random features; the cost depends on a few
// features and spans about 10x (like real schedules), so a working model must learn to
// rank them.
struct Synthetic {
  std::vector<std::vector<std::vector<float>>> programs;
  std::vector<double> costs;
};

Synthetic make_synthetic(int n, uint64_t seed) {
  Rng rng(seed);
  Synthetic s;
  for (int i = 0; i < n; ++i) {
    std::vector<std::vector<float>> prog;
    double cost = 0;
    int stores = 1 + int(rng.pick(2));
    for (int r = 0; r < stores; ++r) {
      // Like real features: a few vary between candidates, the rest are fixed.
      std::vector<float> row(kFeaturesPerStore, 1.0f);
      for (int k : {3, 5, 10, 11, 20, 30}) row[k] = float(rng.uniform() * 10);
      cost += 1.0 + 0.3 * row[3] + 0.03 * row[10] * row[10] - 0.05 * row[20];
      prog.push_back(row);
    }
    s.programs.push_back(prog);
    s.costs.push_back(std::max(0.2, cost));
  }
  return s;
}

// A model trained for `rounds` rounds on n synthetic programs, and its saved blob.
std::string trained_blob(int rounds, int n, uint64_t seed) {
  XGBOptions o;
  o.rounds = rounds;
  XGBModel m(o, 1);
  auto d = make_synthetic(n, seed);
  m.add_data("w", d.programs, d.costs);
  EXPECT_TRUE(m.train());
  return m.save();
}

}  // namespace

TEST(XGBModel, LearnsToRank) {
  XGBOptions o;
  o.rounds = 40;
  XGBModel m(o, 1);
  auto train = make_synthetic(400, 1);
  m.add_data("w", train.programs, train.costs);
  ASSERT_TRUE(m.train());
  auto test = make_synthetic(100, 2);
  RankMetrics r = m.evaluate("w", test.programs, test.costs, 10);
  std::printf("synthetic ranking: pairwise accuracy %.3f, top-10 recall %.2f\n", r.pairwise_accuracy,
              r.top_k_recall);
  EXPECT_GT(r.pairwise_accuracy, 0.8);
}

TEST(XGBModel, PredictionsSurviveSaveAndLoad) {
  XGBOptions o;
  o.rounds = 10;
  XGBModel m(o, 1);
  auto d = make_synthetic(100, 3);
  m.add_data("w", d.programs, d.costs);
  ASSERT_TRUE(m.train());
  std::string blob = m.save();
  XGBModel n(o, 2);
  n.load(blob);
  EXPECT_EQ(m.predict_features(d.programs), n.predict_features(d.programs));
}

TEST(XGBModel, RefusesAnotherFeatureVersion) {
  XGBOptions o;
  std::string blob = trained_blob(2, 64, 4);
  std::string old = "\"feature_version\":" + std::to_string(kFeatureVersion);
  auto pos = blob.find(old);
  ASSERT_NE(pos, std::string::npos);
  blob.replace(pos, old.size(), "\"feature_version\":" + std::to_string(kFeatureVersion + 1));
  XGBModel n(o, 2);
  EXPECT_THROW(n.load(blob), UserError);
  EXPECT_THROW(n.load("garbage"), UserError);
}

// XGBoost trusts the trees it loads (a child index out of range crashed it, a tree pointing
// at itself looped): a damaged blob is refused by its checksum first, a cut one too.
TEST(XGBModel, RefusesADamagedSavedModel) {
  XGBOptions o;
  std::string blob = trained_blob(2, 64, 4);
  XGBModel n(o, 2);
  auto refuses = [&](const std::string& b, const char* why) {
    try {
      n.load(b);
      ADD_FAILURE() << "loaded: " << why;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("damaged"), std::string::npos) << e.what();
    }
  };
  std::string child = "\"left_children\":[";
  size_t at = blob.find(child);
  ASSERT_NE(at, std::string::npos);
  std::string edited = blob;
  edited.insert(at + child.size(), "1000000");
  edited.erase(at + child.size() + 7, edited.find_first_of(",]", at + child.size() + 7) - (at + child.size() + 7));
  refuses(edited, "a child index out of range");
  refuses(blob.substr(0, blob.size() / 2), "half a blob");
  // Without a checksum (saved before it existed) a cut blob is still XGBoost's to refuse.
  std::string plain = R"({"kind":"xgboost","feature_version":)" + std::to_string(kFeatureVersion) + "}" +
                      blob.substr(blob.find('\n'));
  EXPECT_NO_THROW(n.load(plain));
  refuses(plain.substr(0, plain.size() / 2), "half a blob without a checksum");
  EXPECT_THROW(n.load(R"({"kind":7})" "\n{}"), UserError);
}

TEST(XGBModel, UntrainedModelStillRanks) {
  XGBModel m;
  auto d = make_synthetic(5, 5);
  EXPECT_FALSE(m.trained());
  EXPECT_EQ(m.predict_features(d.programs).size(), 5u);
}

TEST(XGBModel, RemembersFeaturesPerDagNotJustPerSchedule) {
  // The same steps on B and on B transposed: equal state texts, different programs. The
  // model's feature cache must not answer the second with the first's features.
  auto build = [](const char* t) {
    auto& def = ops::find_op("matmul");
    return def.build(ops::parse_params(def, {"m=64", "n=64", "k=64", std::string("transpose_b=") + t}));
  };
  te::ComputeDAG plain = build("0"), transposed = build("1");
  schedule::State a(plain), b(transposed);
  ASSERT_EQ(a.str(), b.str());
  auto fa = extract_store_features(a), fb = extract_store_features(b);
  // Trained to tell the two apart.
  XGBOptions o;
  o.rounds = 10;
  XGBModel m(o, 1);
  std::vector<std::vector<std::vector<float>>> programs;
  std::vector<double> costs;
  for (int i = 0; i < 32; ++i) {
    programs.push_back(i % 2 ? fb : fa);
    costs.push_back(i % 2 ? 10.0 : 1.0);
  }
  m.add_data("w", programs, costs);
  ASSERT_TRUE(m.train());
  ASSERT_NE(m.predict_features({fa}), m.predict_features({fb}));
  m.predict(plain, {&a});
  EXPECT_EQ(m.predict(transposed, {&b}), m.predict_features({fb}));
  EXPECT_EQ(m.predict(transposed, {&b}), m.predict(transposed, {&b}));  // from the cache: the same
}

TEST(XGBModel, BatchesLargerThanTheFeatureCacheKeepTheirFeatures) {
  auto& def = ops::find_op("matmul");
  auto dag = def.build(ops::parse_params(def, {"m=64", "n=64", "k=64"}));
  std::vector<schedule::Schedule> scheds;
  for (int64_t f : {1, 2, 4, 8, 16, 32}) {
    schedule::Schedule s(dag);
    s.split(dag.outputs()[0]->name, 1, {f});
    scheds.push_back(s);
  }
  std::vector<const schedule::State*> states;
  std::vector<std::vector<std::vector<float>>> features;
  for (auto& s : scheds) {
    states.push_back(&s.state());
    features.push_back(extract_store_features(s.state()));
  }
  XGBOptions o;
  o.rounds = 10;
  o.feature_cache = 2;  // smaller than a batch
  XGBModel m(o, 1);
  std::vector<double> costs;
  for (size_t i = 0; i < features.size(); ++i) costs.push_back(1.0 + double(i));
  for (int rep = 0; rep < 8; ++rep) m.add_data("w", features, costs);
  ASSERT_TRUE(m.train());
  auto expected = m.predict_features(features);
  EXPECT_EQ(m.predict(dag, states), expected);
  EXPECT_EQ(m.predict(dag, states), expected);
}
