#include <gtest/gtest.h>

#include <algorithm>

#include "costmodel/random_model.h"
#include "ops/registry.h"
#include "search/evolutionary.h"
#include "support/hash.h"

using namespace tuner;
using namespace tuner::search;

namespace {

// A deterministic fake runner: the cost is a fixed function of the schedule.
double fake_cost(const schedule::State& st) { return 1.0 + double(fnv1a64(st.str()) % 1000) / 100.0; }
double fake_cost(const schedule::Schedule& s) { return fake_cost(s.state()); }

std::vector<std::string> run_search(uint64_t seed) {
  auto& def = ops::find_op("matmul");
  auto dag = def.build(ops::parse_params(def, {"m=64", "n=64", "k=64"}));
  costmodel::RandomModel model(seed);
  SearchOptions so;
  so.population = 32;
  so.generations = 2;
  EvolutionarySearch search(dag, SpaceOptions{}, so, &model, seed);
  std::vector<std::string> proposed;
  for (int round = 0; round < 3; ++round) {
    auto cands = search.propose(8);
    std::vector<double> costs;
    for (auto& c : cands) {
      proposed.push_back(c.trace().str());
      costs.push_back(fake_cost(c));
    }
    search.notify(cands, costs);
  }
  return proposed;
}

// A model that knows fake_cost exactly, its score passed through `shape` (increasing).
class OracleModel : public costmodel::CostModel {
 public:
  explicit OracleModel(double (*shape)(double)) : shape_(shape) {}
  std::vector<double> predict(const te::ComputeDAG&,
                              const std::vector<const schedule::State*>& states) override {
    std::vector<double> out;
    for (auto* st : states) out.push_back(shape_(-fake_cost(*st)));
    return out;
  }
  void update(const te::ComputeDAG&, const std::vector<const schedule::State*>&,
              const std::vector<double>&) override {}

 private:
  double (*shape_)(double);
};

std::vector<std::string> run_oracle(double (*shape)(double)) {
  auto& def = ops::find_op("matmul");
  auto dag = def.build(ops::parse_params(def, {"m=64", "n=64", "k=64"}));
  OracleModel model(shape);
  SearchOptions so;
  so.population = 32;
  EvolutionarySearch search(dag, SpaceOptions{}, so, &model, 5);
  std::vector<std::string> out;
  for (auto& c : search.propose(8)) out.push_back(c.trace().str());
  return out;
}

}  // namespace

// Parents are drawn by rank: any increasing transform of the scores proposes the same
// candidates (drawing by score differences made parents nearly equally likely whenever the
// scores were large negated costs).
TEST(EvolutionarySearch, OnlyTheModelsRankingMatters) {
  auto plain = run_oracle([](double x) { return x; });
  auto cubed = run_oracle([](double x) { return x * x * x; });
  auto shifted = run_oracle([](double x) { return 1000 + x / 1000; });
  ASSERT_EQ(plain.size(), 8u);
  EXPECT_EQ(plain, cubed);
  EXPECT_EQ(plain, shifted);
}

TEST(EvolutionarySearch, SameSeedProposesIdenticalCandidates) {
  auto a = run_search(7), b = run_search(7);
  ASSERT_EQ(a.size(), 24u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, run_search(8));
}

TEST(EvolutionarySearch, NeverProposesAMeasuredCandidateAgain) {
  auto a = run_search(3);
  std::set<std::string> unique(a.begin(), a.end());
  EXPECT_EQ(unique.size(), a.size());
}

// The first round measures the fallback's point of the space first, so mutations start from
// a schedule as good as the default one; once measured it is not proposed again.
TEST(EvolutionarySearch, FirstProposalIsTheFallbacksPoint) {
  auto& def = ops::find_op("matmul");
  auto dag = def.build(ops::parse_params(def, {"m=64", "n=64", "k=64"}));
  SpaceOptions like;
  like.like_fallback = true;
  std::string start = generate_schedule(dag, like, 1).trace().str();
  auto proposed = run_search(11);
  ASSERT_FALSE(proposed.empty());
  EXPECT_EQ(proposed[0], start);
  EXPECT_EQ(std::count(proposed.begin(), proposed.end(), start), 1);
}
