// version_guarded_reductions: a reduction nest reading guarded loads gets a copy without the
// guards, run when the guards hold at the extremes of the nest's variables; tests it cannot
// bound stay, and loops that are not reductions or tests that never hold are left alone.
#include <gtest/gtest.h>

#include "schedule/passes.h"
#include "te/functor.h"
#include "te/printer.h"
#include "te/simplify.h"

using namespace tuner;
using namespace tuner::te;
using tuner::schedule::version_guarded_reductions;

namespace {

// out[t] += in[t * 4 + r - 1] where guard(col) holds, for r in [0, 3): a 1-D conv with
// padding 1 over 30 inputs, tile t.
struct Conv1d {
  Var t{"t"}, r{"r"};
  Buffer in = make_buffer("in", DataType::f32(), {30});
  Buffer out = make_buffer("out", DataType::f32(), {8});

  Expr col() const { return t * make_int(4) + r - make_int(1); }
  Expr inside() const { return logical_and(col() >= make_int(0), col() < make_int(30)); }
  Stmt nest(const Expr& guard, const Expr& index_of_out) const {
    Expr v = if_then_else(guard, buffer_load(in, {col()}), make_float(0));
    Stmt acc = buffer_store(out, buffer_load(out, {index_of_out}) + v, {index_of_out});
    return make_for(r, make_int(0), make_int(3), ForKind::Serial, acc);
  }
  Stmt tiles(const Expr& guard) const {
    return make_for(t, make_int(0), make_int(8), ForKind::Serial, nest(guard, t));
  }
};

int count_guarded_loads(const Stmt& s) {
  int n = 0;
  visit_exprs(s, [&](const Expr& e) {
    auto* c = e.as<CallNode>();
    n += c && c->op == Intrinsic::IfThenElse;
  });
  return n;
}

}  // namespace

TEST(VersionGuardedReductions, InteriorTilesReadWithoutGuards) {
  Conv1d c;
  Stmt s = version_guarded_reductions(c.tiles(c.inside()));
  auto* loop = s.as<ForNode>();
  ASSERT_NE(loop, nullptr);
  auto* ite = loop->body.as<IfThenElseNode>();
  ASSERT_NE(ite, nullptr) << to_string(s);
  EXPECT_EQ(count_guarded_loads(ite->then_case), 0);
  EXPECT_EQ(count_guarded_loads(ite->else_case), 1);  // the border tiles keep their tests
  // Columns 4t - 1 ... 4t + 1 lie in [0, 30) for t = 1 ... 7 only.
  for (int64_t t = 0; t < 8; ++t) {
    std::optional<int64_t> v = const_int_value(simplify(substitute(ite->cond, {{c.t.get(), make_int(t)}})));
    ASSERT_TRUE(v) << t;
    EXPECT_EQ(*v != 0, t >= 1) << t;
  }
}

TEST(VersionGuardedReductions, TestsItCannotBoundStayInTheCopy) {
  Conv1d c;
  // The parity test is not linear: the copy drops the border tests and keeps it.
  Expr odd = eq(floormod(c.col(), make_int(2)), make_int(1));
  Stmt s = version_guarded_reductions(c.tiles(logical_and(c.inside(), odd)));
  auto* ite = s.as<ForNode>()->body.as<IfThenElseNode>();
  ASSERT_NE(ite, nullptr);
  std::string copy = to_string(ite->then_case);
  EXPECT_NE(copy.find("% 2"), std::string::npos) << copy;
  EXPECT_EQ(copy.find("< 30"), std::string::npos) << copy;
  EXPECT_EQ(to_string(ite->cond).find("% 2"), std::string::npos);
}

TEST(VersionGuardedReductions, OtherNestsAreUnchanged) {
  Conv1d c;
  // Only the parity test: nothing to hoist.
  Stmt odd = c.tiles(eq(floormod(c.col(), make_int(2)), make_int(1)));
  EXPECT_TRUE(version_guarded_reductions(odd).same_as(odd));
  // A test mixing the nest's variable with another in a product cannot be bounded.
  Stmt mixed = c.tiles(c.t * c.r >= make_int(1));
  EXPECT_TRUE(version_guarded_reductions(mixed).same_as(mixed));
  // A test that fails somewhere in every nest (r >= 1): no copy.
  Stmt never = c.tiles(c.r >= make_int(1));
  EXPECT_TRUE(version_guarded_reductions(never).same_as(never));
  // A test reading memory stays where its other tests guard it (idx[4t + r - 1]).
  Buffer idx = make_buffer("idx", DataType::i64(), {30});
  Stmt loads = c.tiles(logical_and(c.inside(), buffer_load(idx, {c.col()}) >= make_int(0)));
  Stmt v = version_guarded_reductions(loads);
  ASSERT_NE(v.as<ForNode>()->body.as<IfThenElseNode>(), nullptr);
  EXPECT_EQ(to_string(v.as<ForNode>()->body.as<IfThenElseNode>()->cond).find("idx"), std::string::npos);
  Stmt outer_load = c.tiles(buffer_load(idx, {c.t}) >= make_int(0));
  EXPECT_TRUE(version_guarded_reductions(outer_load).same_as(outer_load));
}

TEST(VersionGuardedReductions, TestsThatAlwaysHoldAreDropped) {
  Conv1d c;
  // t in [0, 8), r in [0, 3): 4t + r - 1 < 30 always; no version, the guard is gone.
  Stmt s = version_guarded_reductions(c.tiles(c.col() < make_int(30)));
  auto* loop = s.as<ForNode>();
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->body.as<IfThenElseNode>(), nullptr) << to_string(s);
  EXPECT_EQ(count_guarded_loads(s), 0);
}

// Two 2-wide tiles over a 3-wide row: each tile touches a border, so no tile passes the
// column tests; the copy is for the rows (y + r - 1 >= 0) and keeps the column tests.
TEST(VersionGuardedReductions, ColumnTestsNoTileHoldsStayInTheCopy) {
  Var y("y"), t("t"), r("r");
  Buffer in = make_buffer("in", DataType::f32(), {12});
  Buffer out = make_buffer("out", DataType::f32(), {8});
  Expr col = t * make_int(2) + r - make_int(1), row = y + r - make_int(1);
  Expr ok = logical_and(row >= make_int(0), logical_and(col >= make_int(0), col < make_int(3)));
  Expr o = y * make_int(2) + t;
  Expr v = if_then_else(ok, buffer_load(in, {row * make_int(3) + col}), make_float(0));
  Stmt nest = make_for(r, make_int(0), make_int(3), ForKind::Serial,
                       buffer_store(out, buffer_load(out, {o}) + v, {o}));
  Stmt s = make_for(y, make_int(0), make_int(4), ForKind::Serial,
                    make_for(t, make_int(0), make_int(2), ForKind::Serial, nest));
  Stmt r2 = version_guarded_reductions(s);
  auto* ite = r2.as<ForNode>()->body.as<ForNode>()->body.as<IfThenElseNode>();
  ASSERT_NE(ite, nullptr) << to_string(r2);
  std::string cond = to_string(ite->cond), copy = to_string(ite->then_case);
  EXPECT_EQ(cond.find("t"), std::string::npos) << cond;  // rows only
  EXPECT_NE(copy.find("< 3"), std::string::npos) << copy;
  EXPECT_EQ(count_guarded_loads(ite->then_case), 1);
  for (int64_t yv = 0; yv < 4; ++yv) {
    std::optional<int64_t> k = const_int_value(simplify(substitute(ite->cond, {{y.get(), make_int(yv)}})));
    ASSERT_TRUE(k);
    EXPECT_EQ(*k != 0, yv >= 1) << yv;
  }
}

// A loop and its cut-off tail on one variable (partition_tails): the variable's range is
// the union of both loops', not the last one's.
TEST(VersionGuardedReductions, AVariableOfTwoLoopsTakesBothRanges) {
  Var r("r"), j("j");
  Buffer in = make_buffer("in", DataType::f32(), {10});
  Buffer out = make_buffer("out", DataType::f32(), {16});
  auto loop = [&](int64_t extent) {
    Expr v = if_then_else(j + r < make_int(10), buffer_load(in, {j + r}), make_float(0));
    return make_for(j, make_int(0), make_int(extent), ForKind::Serial,
                    buffer_store(out, buffer_load(out, {Expr(j)}) + v, {Expr(j)}));
  };
  Stmt s = make_for(r, make_int(0), make_int(3), ForKind::Serial, seq({loop(16), loop(4)}));
  // j + r reaches 17 in the first loop: the test cannot be dropped anywhere.
  Stmt v = version_guarded_reductions(s);
  EXPECT_EQ(count_guarded_loads(v), 2) << to_string(v);
}

// A test that fails somewhere in every nest stays in the copy; the others leave it.
TEST(VersionGuardedReductions, TestsThatNeverHoldStayInTheCopy) {
  Conv1d c;
  Stmt s = version_guarded_reductions(c.tiles(logical_and(c.inside(), c.r >= make_int(1))));
  auto* ite = s.as<ForNode>()->body.as<IfThenElseNode>();
  ASSERT_NE(ite, nullptr) << to_string(s);
  std::string copy = to_string(ite->then_case);
  EXPECT_NE(copy.find("r >= 1"), std::string::npos) << copy;
  EXPECT_EQ(copy.find("< 30"), std::string::npos) << copy;
}
