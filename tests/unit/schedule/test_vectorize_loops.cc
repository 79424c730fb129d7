// vectorize_loops: a guarded (padded) load vectorizes under a mask when every load in its
// branch is a vector or reads a one-element parameter (index 0); other scalar loads keep the
// loop serial. A condition the same in every lane stays scalar.
#include <gtest/gtest.h>

#include "schedule/passes.h"
#include "te/functor.h"
#include "te/printer.h"

using namespace tuner;
using namespace tuner::te;
using tuner::schedule::vectorize_loops;

namespace {

// out[v] = (in[v - 1] - zp[index]) where v >= 1, else 0, over a vectorized v in [0, 16).
Stmt padded_centering(const Expr& zp_index) {
  Var v{"v"};
  Buffer in = make_buffer("in", DataType::i32(), {16});
  Buffer zp = make_buffer("zp", DataType::i32(), {16});
  Buffer out = make_buffer("out", DataType::i32(), {16});
  Expr value = if_then_else(Expr(v) >= make_int(1), buffer_load(in, {Expr(v) - make_int(1)}) - buffer_load(zp, {zp_index}),
                            make_int(0));
  return make_for(v, make_int(0), make_int(16), ForKind::Vectorized, buffer_store(out, value, {Expr(v)}));
}

bool is_loop(const Stmt& s) { return s.as<ForNode>() != nullptr; }

}  // namespace

TEST(VectorizeLoops, MaskedBranchMayReadAOneElementParameter) {
  Stmt s = vectorize_loops(padded_centering(make_int(0)));
  EXPECT_FALSE(is_loop(s)) << to_string(s);
  EXPECT_NE(to_string(s).find("ramp"), std::string::npos) << to_string(s);
}

TEST(VectorizeLoops, MaskedBranchWithAnotherScalarLoadStaysSerial) {
  Var k{"k"};
  for (const Expr& index : {make_int(3), Expr(k)}) {
    Stmt s = vectorize_loops(padded_centering(index));
    ASSERT_TRUE(is_loop(s)) << to_string(s);
    EXPECT_EQ(s.as<ForNode>()->for_kind, ForKind::Serial) << to_string(s);
  }
}

// out[f] = f // 16 < 4 ? a[f] : b[f - 64] * k[f // 16 - 4] for f = 16c + v, v vectorized: the
// condition is one per vector once simplified, so it stays a scalar branch and its branches
// may read scalars (k at a row's index), which a per-lane choice could not.
TEST(VectorizeLoops, ConditionOfOneValuePerVectorStaysScalar) {
  Var c{"c"}, v{"v"};
  Buffer a = make_buffer("a", DataType::f32(), {128});
  Buffer b = make_buffer("b", DataType::f32(), {64});
  Buffer k = make_buffer("k", DataType::f32(), {4});
  Buffer out = make_buffer("out", DataType::f32(), {128});
  Expr f = Expr(c) * make_int(16) + Expr(v), row = floordiv(f, make_int(16));
  Expr value = if_then_else(row < make_int(4), buffer_load(a, {f}),
                            buffer_load(b, {f - make_int(64)}) * buffer_load(k, {row - make_int(4)}));
  Stmt inner = make_for(v, make_int(0), make_int(16), ForKind::Vectorized, buffer_store(out, value, {f}));
  Stmt s = vectorize_loops(make_for(c, make_int(0), make_int(8), ForKind::Serial, inner));
  auto* outer = s.as<ForNode>();
  ASSERT_TRUE(outer) << to_string(s);
  ASSERT_FALSE(is_loop(outer->body)) << "not vectorized: " << to_string(s);
  int scalar_conditions = 0, vector_conditions = 0;
  visit_exprs(outer->body, [&](const Expr& e) {
    auto* call = e.as<CallNode>();
    if (!call || call->op != Intrinsic::IfThenElse) return;
    EXPECT_EQ(call->type.lanes, 16) << to_string(e);
    ++(call->args[0].type().is_scalar() ? scalar_conditions : vector_conditions);
  });
  EXPECT_EQ(scalar_conditions, 1) << to_string(s);
  EXPECT_EQ(vector_conditions, 0) << to_string(s);
}
