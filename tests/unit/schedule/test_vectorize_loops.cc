// vectorize_loops: a guarded (padded) load vectorizes under a mask when every load in its
// branch is a vector or reads a one-element parameter (index 0); other scalar loads keep the
// loop serial.
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
