#include <gtest/gtest.h>

#include "costmodel/random_model.h"
#include "ops/registry.h"
#include "search/evolutionary.h"

using namespace tuner;
using namespace tuner::search;

namespace {

// A deterministic fake runner: the cost is a fixed function of the schedule.
double fake_cost(const schedule::Schedule& s) {
  return 1.0 + double(EvolutionarySearch::key_of(s) % 1000) / 100.0;
}

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

}  // namespace

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
