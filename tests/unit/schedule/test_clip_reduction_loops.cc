// clip_guarded_reduction_loops: a serial loop whose every store adds a value its guards zero
// runs only where the loosest of those guards can hold; other loops are left alone.
#include <gtest/gtest.h>

#include "schedule/passes.h"
#include "te/functor.h"
#include "te/printer.h"
#include "te/simplify.h"

using namespace tuner;
using namespace tuner::te;
using tuner::schedule::clip_guarded_reduction_loops;

namespace {

// A dilated 1-D conv tap loop: out[t] += (in[t + 12 r - 12] where it lies in [0, 28)) * w[r]
// for r in [0, 3), output column t fixed by an enclosing loop.
struct DilatedTap {
  Var t{"t"}, r{"r"};
  Buffer in = make_buffer("in", DataType::f32(), {28});
  Buffer w = make_buffer("w", DataType::f32(), {3});
  Buffer out = make_buffer("out", DataType::f32(), {28});

  Expr col(int64_t shift = 0) const { return t + r * make_int(12) - make_int(12 - shift); }
  Expr inside(int64_t shift = 0) const { return logical_and(col(shift) >= make_int(0), col(shift) < make_int(28)); }
  Expr tap(int64_t shift = 0) const {
    return if_then_else(inside(shift), buffer_load(in, {col(shift)}), make_float(0)) * buffer_load(w, {Expr(r)});
  }
  Stmt acc(const Expr& index, const Expr& x) const {
    return buffer_store(out, buffer_load(out, {index}) + x, {index});
  }
  Stmt loop(const Stmt& body) const { return make_for(r, make_int(0), make_int(3), ForKind::Serial, body); }
};

// The values of r the loop visits for a given t.
std::vector<int64_t> visited(const Stmt& s, const Var& t, int64_t tv) {
  auto* f = s.as<ForNode>();
  EXPECT_NE(f, nullptr);
  if (!f) return {};
  std::optional<int64_t> lo = const_int_value(simplify(substitute(f->min, {{t.get(), make_int(tv)}})));
  std::optional<int64_t> n = const_int_value(simplify(substitute(f->extent, {{t.get(), make_int(tv)}})));
  EXPECT_TRUE(lo && n) << to_string(s);
  std::vector<int64_t> out;
  for (int64_t i = 0; lo && n && i < *n; ++i) out.push_back(*lo + i);
  return out;
}

}  // namespace

TEST(ClipGuardedReductionLoops, TapsReadingOnlyPaddingAreSkipped) {
  DilatedTap d;
  Stmt s = clip_guarded_reduction_loops(d.loop(d.acc(d.t, d.tap())));
  // Column t + 12 r - 12 lies in [0, 28) for r = 0 from t = 12, for r = 2 below t = 16.
  EXPECT_EQ(visited(s, d.t, 0), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(visited(s, d.t, 13), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(visited(s, d.t, 27), (std::vector<int64_t>{0, 1}));
}

TEST(ClipGuardedReductionLoops, SeveralStoresTakeTheLoosestBound) {
  DilatedTap d;
  // Two unrolled columns t and t + 4: their tests differ by a constant.
  Stmt body = seq({d.acc(d.t, d.tap()), d.acc(d.t + make_int(1), d.tap(4))});
  Stmt s = clip_guarded_reduction_loops(d.loop(body));
  // t = 8: r = 0 reads column -4 (padding) for the first, 0 for the second: kept.
  EXPECT_EQ(visited(s, d.t, 8), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(visited(s, d.t, 0), (std::vector<int64_t>{1, 2}));
}

// Inside the clipped loop the bounding tests always hold: they leave the body. A store whose
// test is stricter than the loosest keeps it.
TEST(ClipGuardedReductionLoops, TestsTheBoundsImplyAreRemoved) {
  DilatedTap d;
  std::string one = to_string(clip_guarded_reduction_loops(d.loop(d.acc(d.t, d.tap()))));
  EXPECT_EQ(one.find("if_then_else"), std::string::npos) << one;
  // Columns t and t + 4: the second's lower test and the first's upper one bound the loop.
  Stmt body = seq({d.acc(d.t, d.tap()), d.acc(d.t + make_int(1), d.tap(4))});
  Stmt s = clip_guarded_reduction_loops(d.loop(body));
  std::string two = to_string(s);
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = two.find(what); at != std::string::npos; at = two.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("if_then_else"), 2u) << two;
  EXPECT_EQ(count("&&"), 0u) << two;  // one test left per guard
  EXPECT_EQ(visited(s, d.t, 8), (std::vector<int64_t>{0, 1, 2}));
}

TEST(ClipGuardedReductionLoops, OtherLoopsAreUnchanged) {
  DilatedTap d;
  // A store that does not accumulate: skipping would leave the old value.
  Stmt overwrite = d.loop(buffer_store(d.out, d.tap(), {Expr(d.t)}));
  EXPECT_TRUE(clip_guarded_reduction_loops(overwrite).same_as(overwrite));
  // A second store adding an unguarded value.
  Stmt plain = d.loop(seq({d.acc(d.t, d.tap()), d.acc(d.t, buffer_load(d.w, {Expr(d.r)}))}));
  EXPECT_TRUE(clip_guarded_reduction_loops(plain).same_as(plain));
  // A sum only one operand of which is guarded.
  Stmt half = d.loop(d.acc(d.t, d.tap() + buffer_load(d.w, {Expr(d.r)})));
  EXPECT_TRUE(clip_guarded_reduction_loops(half).same_as(half));
  // A guard that is not zero when it fails.
  Expr one = if_then_else(d.inside(), buffer_load(d.in, {d.col()}), make_float(1));
  Stmt ones = d.loop(d.acc(d.t, one));
  EXPECT_TRUE(clip_guarded_reduction_loops(ones).same_as(ones));
  // A test on a loop inside the clipped one cannot bound it.
  Var j("j");
  Expr inner = if_then_else(d.col() + j >= make_int(0), buffer_load(d.in, {d.col() + j}), make_float(0));
  Stmt nested = d.loop(make_for(j, make_int(0), make_int(2), ForKind::Serial, d.acc(d.t, inner)));
  std::string text = to_string(clip_guarded_reduction_loops(nested));
  EXPECT_NE(text.find("for r in [0, 3)"), std::string::npos) << text;
}
