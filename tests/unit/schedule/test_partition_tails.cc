// partition_tails: a vectorized loop whose split leaves a partial last block vectorizes in
// both parts (whole vectors, then the shorter block), with no guard left.
#include <gtest/gtest.h>

#include <set>

#include "ops/registry.h"
#include "schedule/fallback.h"
#include "schedule/lower.h"
#include "te/functor.h"

using namespace tuner;

namespace {

struct StmtStats {
  std::set<int> store_lanes;  // lanes of the stores to the kernel's output
  int guards = 0;             // if-statements
};

void walk(const te::Stmt& s, const te::BufferNode* out, StmtStats* st) {
  if (!s) return;
  if (auto* q = s.as<te::SeqStmtNode>()) {
    for (auto& x : q->seq) walk(x, out, st);
  } else if (auto* f = s.as<te::ForNode>()) {
    walk(f->body, out, st);
  } else if (auto* a = s.as<te::AllocateNode>()) {
    walk(a->body, out, st);
  } else if (auto* i = s.as<te::IfThenElseNode>()) {
    ++st->guards;
    walk(i->then_case, out, st);
    walk(i->else_case, out, st);
  } else if (auto* b = s.as<te::BufferStoreNode>(); b && b->buffer.get() == out) {
    st->store_lanes.insert(b->value.type().lanes);
  }
}

StmtStats lowered_fallback(const std::string& op, const std::vector<std::string>& params) {
  auto& def = ops::find_op(op);
  auto dag = def.build(ops::parse_params(def, params));
  schedule::FallbackOptions fo;
  fo.vector_lanes = 16;
  auto f = schedule::lower(schedule::fallback_schedule(dag, fo).state(), "k");
  StmtStats st;
  walk(f.body, f.args.back().get(), &st);
  return st;
}

}  // namespace

TEST(PartitionTails, PartialLastBlockIsAShorterVector) {
  // 56 output columns (a stride-2 depthwise conv over 112): 3 x 16 lanes, then 8.
  auto dw = lowered_fallback("depthwise_conv2d", {"c=8", "h=112", "w=112", "stride=2", "pad=1", "bias=1"});
  EXPECT_EQ(dw.store_lanes, (std::set<int>{8, 16}));
  EXPECT_EQ(dw.guards, 0);
  // 60 = 3 x 16 + 12.
  auto pool = lowered_fallback("max_pool2d", {"c=8", "h=60", "w=60", "kernel=3", "stride=1", "pad=1"});
  EXPECT_EQ(pool.store_lanes, (std::set<int>{12, 16}));
  EXPECT_EQ(pool.guards, 0);
}

TEST(PartitionTails, DividingSplitIsUnchanged) {
  auto dw = lowered_fallback("depthwise_conv2d", {"c=8", "h=64", "w=64", "pad=1"});
  EXPECT_EQ(dw.store_lanes, (std::set<int>{32}));
  EXPECT_EQ(dw.guards, 0);
}
