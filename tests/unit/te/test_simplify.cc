#include <gtest/gtest.h>

#include <limits>
#include <type_traits>

#include "te/bounds.h"
#include "te/functor.h"
#include "te/printer.h"
#include "te/simplify.h"

using namespace tuner::te;

TEST(Simplify, FoldsLinearIndexArithmetic) {
  Var i("i"), j("j");
  Expr e = (i * 4 + j) * 8 + Expr(3) - j * 8;
  EXPECT_EQ(to_string(simplify(e)), "((i * 32) + 3)");
}

TEST(Simplify, FloorDivModWithBounds) {
  Var io("io"), ii("ii");
  RangeMap r{{io.get(), {0, 9}}, {ii.get(), {0, 7}}};
  Expr x = io * 8 + ii;
  EXPECT_EQ(to_string(simplify(floordiv(x, Expr(8)), r)), "io");
  EXPECT_EQ(to_string(simplify(floormod(x, Expr(8)), r)), "ii");
  // Without bounds on ii nothing can be said.
  EXPECT_NE(to_string(simplify(floordiv(x, Expr(8)))), "io");
}

// A fused (row, column) pair flattened row-major is the fused index again, also when the
// simplifier has already reduced the column's operand (x - y a multiple of the width).
TEST(Simplify, RowMajorPositionOfAFusedPairIsTheFusedIndex) {
  Var f("f"), b("b");
  Expr rows = floordiv(f, Expr(14)), cols = floormod(f, Expr(14));
  EXPECT_EQ(to_string(simplify(b * 196 + rows * 14 + cols)), "((b * 196) + f)");
  Expr x = b * 28 + f;
  EXPECT_EQ(to_string(simplify(floordiv(x, Expr(14)) * 14 + floormod(f, Expr(14)))),
            "((b * 28) + f)");
  // Not a multiple of the width: left alone.
  Expr y = b * 3 + f;
  EXPECT_NE(to_string(simplify(floordiv(y, Expr(14)) * 14 + floormod(f, Expr(14)))),
            "((b * 3) + f)");
  // Coefficients that do not match (the row scaled by 13, not 14): left alone.
  EXPECT_NE(to_string(simplify(rows * 13 + cols)), "f");
}

TEST(Simplify, DecidesComparisonsFromRanges) {
  Var i("i");
  RangeMap r{{i.get(), {0, 63}}};
  EXPECT_TRUE(can_prove(i < Expr(64), r));
  EXPECT_FALSE(can_prove(i < Expr(63), r));
  EXPECT_TRUE(can_prove(i * 2 + 1 >= Expr(1), r));
}

TEST(Simplify, RampForms) {
  Var i("i");
  Expr e = broadcast(i * 16, 16) + ramp(Expr(0), Expr(1), 16);
  Expr s = simplify(e);
  ASSERT_TRUE(s.as<RampNode>());
  EXPECT_EQ(to_string(s), "ramp((i * 16), 1, 16)");
}

TEST(Simplify, FloatIdentitiesAndFolding) {
  Var x("x", DataType::f32());
  EXPECT_EQ(to_string(simplify(x * Expr(1.0f) + Expr(0.0f))), "x");
  EXPECT_TRUE(is_const(simplify(Expr(2.0f) * Expr(3.0f)), 6.0));
}

TEST(Bounds, IntervalsOfIndexExpressions) {
  Var i("i"), j("j");
  RangeMap r{{i.get(), {0, 3}}, {j.get(), {0, 9}}};
  IntBound b = const_int_bound(i * 10 + j - 5, r);
  EXPECT_EQ(b.lo, -5);
  EXPECT_EQ(b.hi, 34);
  IntBound m = const_int_bound(floormod(i * 10 + j, Expr(7)), r);
  EXPECT_EQ(m.lo, 0);
  EXPECT_EQ(m.hi, 6);
}

TEST(Printer, VariablesWithOneNameStayDistinct) {
  Var a("x"), b("x");
  std::string s = to_string(a + b);
  EXPECT_EQ(s, "(x + x_1)");
}

// 16 lanes starting at a multiple of 16 never cross a 32-wide block, whatever the range of
// the start: `// 32` is one value for all lanes and `% 32` a ramp (no per-lane gather of a
// packed conv's weights). 32 lanes at a multiple of 16 may cross one: left as they are.
TEST(Simplify, RampsInsideOneBlockByDivisibility) {
  Var j("j"), c("c");
  RangeMap r{{j.get(), {0, 3}}, {c.get(), {0, 2}}};
  Expr lanes16 = ramp(j * 16 + c * 64, Expr(1), 16);
  EXPECT_EQ(to_string(simplify(floordiv(lanes16, Expr(32)), r)), "x16((((j * 16) + (c * 64)) // 32))");
  Expr mod = simplify(floormod(lanes16, Expr(32)), r);
  ASSERT_TRUE(mod.as<RampNode>()) << to_string(mod);
  // A constant offset within the divisor still fits: 8 lanes at 16k + 8.
  EXPECT_TRUE(simplify(floordiv(ramp(j * 16 + 8, Expr(1), 8), Expr(32)), r).as<BroadcastNode>());
  // 9 lanes at 16k + 8 reach the next multiple of 16, which may start a block.
  EXPECT_FALSE(simplify(floordiv(ramp(j * 16 + 8, Expr(1), 9), Expr(32)), r).as<BroadcastNode>());
  EXPECT_FALSE(simplify(floordiv(ramp(j * 16, Expr(1), 32), Expr(32)), r).as<BroadcastNode>());
}

// Operations on broadcasts are one scalar operation broadcast, comparisons included: a
// condition then shows it is the same in every lane.
TEST(Simplify, OperationsOfBroadcastsAreBroadcasts) {
  Var i("i"), j("j");
  auto x16 = [](const Expr& e) { return broadcast(e, 16); };
  for (const Expr& e : {floormod(x16(i), x16(Expr(2))), floordiv(x16(i), x16(Expr(4))), x16(i) < x16(Expr(58)),
                        logical_and(x16(i) >= x16(Expr(1)), x16(j) < x16(Expr(3))),
                        logical_or(eq(x16(i), x16(j)), ne(x16(j), x16(Expr(0))))}) {
    Expr s = simplify(e);
    auto* b = s.as<BroadcastNode>();
    ASSERT_TRUE(b) << to_string(e) << " -> " << to_string(s);
    EXPECT_EQ(b->lanes, 16);
    EXPECT_TRUE(b->value.type().is_scalar());
  }
  EXPECT_EQ(to_string(simplify(floormod(x16(i * 4 + 2), x16(Expr(2))))), "x16(0)");
  // A ramp against a broadcast is not one value.
  EXPECT_FALSE(simplify(ramp(i, Expr(1), 16) < x16(Expr(58))).as<BroadcastNode>());
}

// `a && b` on two Exprs compiles through their explicit bool conversion; assigning the
// result to an Expr must not (it would be the literal 0 or 1, not a condition).
static_assert(!std::is_constructible_v<Expr, bool>, "bool -> Expr must not compile");
static_assert(std::is_constructible_v<Expr, int>);

TEST(Functor, UnsafeDivisionIsByAnythingButANonzeroConstant) {
  Var x("x"), y("y");
  EXPECT_FALSE(has_unsafe_division(floordiv(x, make_int(4)) + floormod(x, make_int(3))));
  EXPECT_TRUE(has_unsafe_division(floordiv(x, y)));
  EXPECT_TRUE(has_unsafe_division(floormod(x, make_int(0))));
  EXPECT_TRUE(has_unsafe_division(x + floormod(make_int(7), y)));
  Var f("f", DataType::f32());
  EXPECT_FALSE(has_unsafe_division(Expr(f) / Expr(f)));  // float division does not trap
}

// Integer identities are exact: a double holds 2^63 - 1 as 2^63, which wrapped to INT64_MIN
// and made every int64 Min reduction (ArgMin, ArgMax's index) return INT64_MIN.
TEST(ReduceIdentity, IntegerLimitsAreExact) {
  auto value = [](ReduceKind k, DataType t) { return *as_const_int(reduce_identity(k, t)); };
  EXPECT_EQ(value(ReduceKind::Min, DataType::i64()), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(value(ReduceKind::Max, DataType::i64()), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(value(ReduceKind::Min, DataType::i32()), std::numeric_limits<int32_t>::max());
  EXPECT_EQ(value(ReduceKind::Max, DataType::i32()), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(value(ReduceKind::Min, DataType::u8()), 255);
  EXPECT_EQ(value(ReduceKind::Max, DataType::u8()), 0);
  EXPECT_EQ(value(ReduceKind::Prod, DataType::i64()), 1);
}

// linear_bound: a comparison linear in v as v >= lo or v < hi (exact for any coefficient).
TEST(LinearBound, SolvesForTheVariable) {
  Var v("v"), k("k");
  auto value = [](const std::optional<VarBound>& b) {
    return b ? const_int_value(simplify(b->bound)).value_or(-999) : -999;
  };
  auto lt = linear_bound(v * make_int(2) + make_int(3) < make_int(10), v.get());  // 2v < 7
  ASSERT_TRUE(lt.has_value());
  EXPECT_FALSE(lt->lower);
  EXPECT_EQ(value(lt), 4);
  auto ge = linear_bound(make_int(1) <= v * make_int(3) - make_int(5), v.get());  // 3v >= 6
  ASSERT_TRUE(ge.has_value());
  EXPECT_TRUE(ge->lower);
  EXPECT_EQ(value(ge), 2);
  auto neg = linear_bound(make_int(7) - v > k, v.get());  // v < 7 - k
  ASSERT_TRUE(neg.has_value());
  EXPECT_FALSE(neg->lower);
  EXPECT_EQ(as_const_int(simplify(substitute(neg->bound, {{k.get(), make_int(2)}})))[0], 5);
  EXPECT_FALSE(linear_bound(v * v >= make_int(0), v.get()).has_value());
  EXPECT_FALSE(linear_bound(floormod(v, make_int(2)) < make_int(1), v.get()).has_value());
  EXPECT_FALSE(linear_bound(k < make_int(1), v.get()).has_value());
}
