// The simplifier: constant folding, canonical linear index arithmetic, floordiv/floormod
// and comparisons decided by interval bounds, vector (ramp/broadcast) forms, and removal of
// loops of extent 0 or 1 and of branches decided at compile time.
#pragma once

#include "te/bounds.h"
#include "te/expr.h"

namespace tuner::te {

/// Simplifies an expression, given known variable ranges.
Expr simplify(const Expr& e, const RangeMap& ranges = {});
/// Simplifies a statement; loop variables get their loop's range. May return an undefined
/// Stmt when nothing is left to execute.
Stmt simplify(const Stmt& s, const RangeMap& ranges = {});
/// True when cond simplifies to a true constant under the ranges.
bool can_prove(const Expr& cond, const RangeMap& ranges = {});

}  // namespace tuner::te
