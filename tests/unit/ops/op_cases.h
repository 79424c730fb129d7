// Shared by the ops tests: registry op cases (op + parameters) that are evaluated through the
// te interpreter and compared with the reference. Each category file defines its table; the
// registry test checks that every registered op has at least three cases.
#pragma once

#include <algorithm>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ops/registry.h"
#include "ops/shape.h"
#include "ops/te_eval.h"
#include "te/tensor.h"

namespace tuner::ops::testing {

struct OpCase {
  std::string op;
  std::vector<std::string> params;
};

std::vector<OpCase> nn_cases();
std::vector<OpCase> elementwise_cases();
std::vector<OpCase> reduce_cases();
std::vector<OpCase> transform_cases();

/// A float32 placeholder (tests build their te graphs on these).
inline te::Tensor f32(Shape s, const std::string& name = "x") {
  return te::placeholder(std::move(s), te::DataType::f32(), name);
}

inline std::string case_str(const OpCase& c) {
  std::string s = c.op;
  for (auto& p : c.params) s += " " + p;
  return s;
}

/// Readable test parameter names in gtest output.
inline void PrintTo(const OpCase& c, std::ostream* os) { *os << case_str(c); }

/// Builds the case's DAG, evaluates it with te_eval on random inputs and compares with the
/// reference (rtol 1e-4, atol 1e-5; integer and bool outputs exactly).
inline void expect_matches_reference(const OpCase& c, uint64_t seed = 7) {
  SCOPED_TRACE(case_str(c));
  const OpDef& op = find_op(c.op);
  Params p = parse_params(op, c.params);
  te::ComputeDAG dag = op.build(p);
  std::vector<HostTensor> inputs = op.make_inputs(p, dag, seed);
  std::vector<HostTensor> got = evaluate_dag(dag, inputs);
  std::vector<HostTensor> want = op.reference(p, inputs);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CompareResult r = compare(got[i], want[i], 1e-4, std::max(1e-5, op.atol));
    EXPECT_TRUE(r.ok) << "output " << i << ": " << r.message;
  }
}

/// gtest parameter name: op plus the case index.
struct CaseName {
  std::string operator()(const ::testing::TestParamInfo<OpCase>& info) const {
    return info.param.op + "_" + std::to_string(info.index);
  }
};

}  // namespace tuner::ops::testing
