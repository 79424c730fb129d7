// hoist_store_guards: a short loop storing a guarded load gets an unguarded copy, run when
// the guards hold over the whole loop; a long one is cut where they hold (where all of them
// hold, for a body of several guarded stores); other loops are left alone.
#include <gtest/gtest.h>

#include "schedule/passes.h"
#include "te/functor.h"
#include "te/printer.h"
#include "te/simplify.h"

using namespace tuner;
using namespace tuner::te;
using tuner::schedule::hoist_store_guards;

namespace {

struct Fill {
  Var k{"k"}, m{"m"};
  Buffer in = make_buffer("in", DataType::f32(), {50});
  Buffer blk = make_buffer("blk", DataType::f32(), {40}, MemScope::Local);

  // for m in [0, 10): blk[k * 10 + m] = guard(col) ? in[col] : 0, col = k * 16 + m - 1.
  Stmt loop(const Expr& guard_of_col, ForKind kind = ForKind::Serial, int64_t extent = 10) const {
    Expr col = k * make_int(16) + m - make_int(1);
    Expr v = if_then_else(guard_of_col, buffer_load(in, {col}), make_float(0));
    return make_for(m, make_int(0), make_int(extent), kind, buffer_store(blk, v, {k * make_int(10) + m}));
  }
  Expr col() const { return k * make_int(16) + m - make_int(1); }
};

}  // namespace

TEST(HoistStoreGuards, InteriorRowsCopyWithoutGuards) {
  Fill f;
  Stmt s = hoist_store_guards(f.loop(logical_and(f.col() >= make_int(0), f.col() < make_int(50))));
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

TEST(HoistStoreGuards, LongRowsAreCutWhereTheGuardsHold) {
  Fill f;
  // 40 columns from k * 16 - 1, of which those in [0, 50) are copied and the rest zeroed.
  Stmt s = hoist_store_guards(f.loop(logical_and(f.col() >= make_int(0), f.col() < make_int(50)),
                                     ForKind::Serial, 40));
  auto* parts = s.as<SeqStmtNode>();
  ASSERT_NE(parts, nullptr);
  ASSERT_EQ(parts->seq.size(), 3u);
  auto value_kind = [&](int i) { return parts->seq[i].as<ForNode>()->body.as<BufferStoreNode>()->value.kind(); };
  EXPECT_EQ(value_kind(0), NodeKind::FloatImm);
  EXPECT_EQ(value_kind(1), NodeKind::BufferLoad);
  EXPECT_EQ(value_kind(2), NodeKind::FloatImm);
  // The copied range [lo, lo + n) for k = 0 (columns -1 ... 38: m in [1, 40)), 1 (15 ... 54:
  // [0, 35)) and 4 (63 ...: empty).
  auto at = [&](const Expr& e, int64_t k) {
    return const_int_value(simplify(substitute(e, {{f.k.get(), make_int(k)}}))).value_or(-1);
  };
  auto* mid = parts->seq[1].as<ForNode>();
  EXPECT_EQ(at(mid->min, 0), 1);
  EXPECT_EQ(at(mid->extent, 0), 39);
  EXPECT_EQ(at(mid->min, 1), 0);
  EXPECT_EQ(at(mid->extent, 1), 35);
  EXPECT_EQ(at(mid->extent, 4), 0);
  // The three ranges cover the loop.
  for (int64_t k : {0, 1, 4}) {
    int64_t total = 0;
    for (auto& p : parts->seq) total += at(p.as<ForNode>()->extent, k);
    EXPECT_EQ(total, 40) << k;
  }
}

// Both column parities of a stride-2 padding block from one pass over the input row:
// par[p][m] = in[2 m + p - 1] where 0 <= 2 m + p - 1 < 50, the row test k >= 1 shared.
TEST(HoistStoreGuards, SeveralStoresAreCutWhereAllOfTheirGuardsHold) {
  Var k("k"), m("m");
  Buffer in = make_buffer("in", DataType::f32(), {50});
  Buffer par = make_buffer("par", DataType::f32(), {2, 26}, MemScope::Local);
  std::vector<Stmt> stores;
  for (int64_t p : {0, 1}) {
    Expr col = m * make_int(2) + make_int(p - 1);
    Expr ok = logical_and(k >= make_int(1), logical_and(col >= make_int(0), col < make_int(50)));
    stores.push_back(buffer_store(par, if_then_else(ok, buffer_load(in, {col}), make_float(0)),
                                  {make_int(p), Expr(m)}));
  }
  Stmt s = hoist_store_guards(make_for(m, make_int(0), make_int(26), ForKind::Serial, seq(stores)));
  auto* parts = s.as<SeqStmtNode>();
  ASSERT_NE(parts, nullptr);
  ASSERT_EQ(parts->seq.size(), 3u);
  // The middle loop stores both parities unguarded; the ends keep both guarded stores.
  auto stores_of = [&](int i) {
    auto* body = parts->seq[size_t(i)].as<ForNode>()->body.as<SeqStmtNode>();
    std::vector<NodeKind> kinds;
    for (auto& st : body ? body->seq : std::vector<Stmt>{})
      kinds.push_back(st.as<BufferStoreNode>()->value.kind());
    return kinds;
  };
  EXPECT_EQ(stores_of(1), (std::vector<NodeKind>{NodeKind::BufferLoad, NodeKind::BufferLoad}));
  EXPECT_EQ(stores_of(0), (std::vector<NodeKind>{NodeKind::Call, NodeKind::Call}));
  EXPECT_EQ(stores_of(2), (std::vector<NodeKind>{NodeKind::Call, NodeKind::Call}));
  // Parity 0 reads column -1 at m = 0, parity 1 column 50 at m = 25: the copies are [1, 25)
  // in a row that passes the row test, none in one that fails it (k = 0).
  auto at = [&](const Expr& e, int64_t kv) {
    return const_int_value(simplify(substitute(e, {{k.get(), make_int(kv)}}))).value_or(-1);
  };
  auto* mid = parts->seq[1].as<ForNode>();
  EXPECT_EQ(at(mid->min, 1), 1);
  EXPECT_EQ(at(mid->extent, 1), 24);
  EXPECT_EQ(at(mid->extent, 0), 0);
  // The row test appears once in the middle loop's bound, not once per store.
  std::string bound = to_string(mid->extent);
  EXPECT_EQ(bound.find("k >= 1"), bound.rfind("k >= 1")) << bound;
}

TEST(HoistStoreGuards, OtherLoopsAreUnchanged) {
  Fill f;
  // A guard not linear in the loop's variable may fail inside the loop.
  Stmt odd = f.loop(eq(floormod(f.col(), make_int(2)), make_int(0)));
  EXPECT_TRUE(hoist_store_guards(odd).same_as(odd));
  // A guard without the loop's variable: nothing to version.
  Stmt inv = f.loop(f.k < make_int(2));
  EXPECT_TRUE(hoist_store_guards(inv).same_as(inv));
  // Only serial loops.
  Stmt unrolled = f.loop(f.col() >= make_int(0), ForKind::Unrolled);
  EXPECT_TRUE(hoist_store_guards(unrolled).same_as(unrolled));
}
