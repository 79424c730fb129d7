// version_guarded_stores: a loop storing a guarded load gets an unguarded copy, run when
// the guards hold over the whole loop; other loops are left alone.
#include <gtest/gtest.h>

#include "schedule/passes.h"
#include "te/functor.h"
#include "te/simplify.h"

using namespace tuner;
using namespace tuner::te;
using tuner::schedule::version_guarded_stores;

namespace {

struct Fill {
  Var k{"k"}, m{"m"};
  Buffer in = make_buffer("in", DataType::f32(), {50});
  Buffer blk = make_buffer("blk", DataType::f32(), {40}, MemScope::Local);

  // for m in [0, 10): blk[k * 10 + m] = guard(col) ? in[col] : 0, col = k * 16 + m - 1.
  Stmt loop(const Expr& guard_of_col, ForKind kind = ForKind::Serial) const {
    Expr col = k * make_int(16) + m - make_int(1);
    Expr v = if_then_else(guard_of_col, buffer_load(in, {col}), make_float(0));
    return make_for(m, make_int(0), make_int(10), kind, buffer_store(blk, v, {k * make_int(10) + m}));
  }
  Expr col() const { return k * make_int(16) + m - make_int(1); }
};

}  // namespace

TEST(VersionGuardedStores, InteriorRowsCopyWithoutGuards) {
  Fill f;
  Stmt s = version_guarded_stores(f.loop(logical_and(f.col() >= make_int(0), f.col() < make_int(50))));
  auto* ite = s.as<IfThenElseNode>();
  ASSERT_NE(ite, nullptr);
  auto* copy = ite->then_case.as<ForNode>();
  ASSERT_NE(copy, nullptr);
  auto* store = copy->body.as<BufferStoreNode>();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->value.kind(), NodeKind::BufferLoad);  // no guard left
  EXPECT_NE(ite->else_case.as<ForNode>(), nullptr);     // the guarded loop, for the border
  // Columns k * 16 - 1 ... k * 16 + 8: all inside [0, 50) only for k = 1 and 2.
  for (int64_t k : {0, 1, 2, 3}) {
    Expr c = simplify(substitute(ite->cond, {{f.k.get(), make_int(k)}}));
    auto* v = as_const_int(c);
    ASSERT_NE(v, nullptr) << k;
    EXPECT_EQ(*v != 0, k == 1 || k == 2) << k;
  }
}

TEST(VersionGuardedStores, OtherLoopsAreUnchanged) {
  Fill f;
  // A guard not linear in the loop's variable may fail inside the loop.
  Stmt odd = f.loop(eq(floormod(f.col(), make_int(2)), make_int(0)));
  EXPECT_TRUE(version_guarded_stores(odd).same_as(odd));
  // A guard without the loop's variable: nothing to version.
  Stmt inv = f.loop(f.k < make_int(2));
  EXPECT_TRUE(version_guarded_stores(inv).same_as(inv));
  // Only serial loops.
  Stmt unrolled = f.loop(f.col() >= make_int(0), ForKind::Unrolled);
  EXPECT_TRUE(version_guarded_stores(unrolled).same_as(unrolled));
}
