// Shape sets of every operator of the library for the correctness tests (host and aarch64):
// non-divisible sizes, size-1 dimensions and broadcasting where it applies.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace tuner::testing {

/// Parameter lists (key=value) of one operator's test cases.
using OpCases = std::vector<std::vector<std::string>>;

/// Op name -> at least three parameter lists; the first is the op's main case.
const std::map<std::string, OpCases>& op_cases();

/// Names of every operator in the registry.
std::vector<std::string> all_op_names();

}  // namespace tuner::testing
