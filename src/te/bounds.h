// Constant interval bounds of integer index expressions, and linear forms
// (sum of coefficient * atom + constant) used by the simplifier and bound inference.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "te/expr.h"

namespace tuner::te {

/// The integers [lo, hi]; kNegInf / kPosInf stand for unbounded ends.
struct IntBound {
  static constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();
  int64_t lo = kNegInf, hi = kPosInf;

  static IntBound point(int64_t v) { return {v, v}; }
  static IntBound everything() { return {}; }
  bool is_point() const { return lo == hi && lo != kNegInf && lo != kPosInf; }
  bool bounded() const { return lo != kNegInf && hi != kPosInf; }
};

/// Known ranges of variables (loop variables: [min, min + extent - 1]).
using RangeMap = std::unordered_map<const VarNode*, IntBound>;

/// Interval bound of an integer expression (vectors: over all lanes).
IntBound const_int_bound(const Expr& e, const RangeMap& ranges);

/// The values a loop's variable takes, given the ranges of the variables around it.
IntBound loop_var_range(const ForNode* loop, const RangeMap& ranges);

/// Structural equality with variables compared by identity.
bool deep_equal(const Expr& a, const Expr& b);
/// Whether some element of v is deep_equal to e.
bool contains_equal(const std::vector<Expr>& v, const Expr& e);

/// e == sum(coef_i * atom_i) + constant, where atoms are the non-linear parts (variables,
/// divisions, ...). Only for scalar integer expressions.
struct LinearForm {
  std::vector<std::pair<Expr, int64_t>> terms;
  int64_t constant = 0;

  /// Adds coef * atom, merging with an equal atom.
  void add(const Expr& atom, int64_t coef);
  Expr to_expr(DataType t = DataType::i64()) const;
};

/// The linear form of a scalar integer expression.
LinearForm to_linear(const Expr& e);

/// A comparison of integers as `form >= 0`, form of the compared type.
struct NonNegativeTest {
  LinearForm form;
  DataType type;
};

/// The comparison (<, <=, >, >= of scalar integers) `cmp` as a NonNegativeTest; nullopt
/// for anything else.
std::optional<NonNegativeTest> nonnegative_form(const Expr& cmp);

/// A test on a variable v as a bound: v >= bound (lower) or v < bound.
struct VarBound {
  bool lower;
  Expr bound;
};

/// The bound on v that a comparison of integers sets, when it is linear in v (v outside any
/// division or product); nullopt otherwise.
std::optional<VarBound> linear_bound(const Expr& cmp, const VarNode* v);

/// The operands of a chain of && (`c` itself when it is not one), appended to `out`.
void conjuncts(const Expr& c, std::vector<Expr>& out);

}  // namespace tuner::te
