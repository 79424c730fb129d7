#include <gmock/gmock.h>

#include <map>
#include <set>

#include "op_cases.h"
#include "ops/registry.h"
#include "support/error.h"

namespace tuner::ops::testing {

using ::testing::HasSubstr;

TEST(Registry, EveryOpIsCompleteAndTested) {
  std::map<std::string, int> cases;
  for (auto* table : {&nn_cases, &elementwise_cases, &reduce_cases, &transform_cases})
    for (auto& c : (*table)()) {
      EXPECT_NO_THROW(find_op(c.op)) << c.op;
      ++cases[c.op];
    }
  for (auto& op : op_registry()) {
    SCOPED_TRACE(op.name);
    EXPECT_FALSE(op.help.empty());
    EXPECT_TRUE(op.build && op.reference && op.make_inputs);
    std::set<std::string> names;
    for (auto& p : op.params) EXPECT_TRUE(names.insert(p.name).second) << p.name;
    EXPECT_GE(cases[op.name], 3) << "op " << op.name << " needs at least 3 test cases";
  }
  for (const char* name : {"matmul",
                           "dense",
                           "conv2d",
                           "depthwise_conv2d",
                           "max_pool2d",
                           "avg_pool2d",
                           "global_avg_pool",
                           "global_max_pool",
                           "relu",
                           "clip",
                           "gelu",
                           "add",
                           "where",
                           "cast",
                           "softmax",
                           "log_softmax",
                           "layer_norm",
                           "reduce_sum",
                           "transpose",
                           "reshape",
                           "concat",
                           "pad",
                           "slice",
                           "gather",
                           "softmax_layer_norm"})
    EXPECT_NO_THROW(find_op(name)) << name;
}

TEST(Registry, UnknownOpListsKnownOps) {
  try {
    find_op("matmull");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown op 'matmull'"));
    EXPECT_THAT(e.what(), HasSubstr("matmul, "));
    EXPECT_THAT(e.what(), HasSubstr("conv2d"));
  }
}

TEST(Registry, ParamErrors) {
  const OpDef& mm = find_op("matmul");
  try {
    parse_params(mm, {"m=4", "n=4", "k=4", "q=1"});
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("no parameter 'q'"));
    EXPECT_THAT(e.what(), HasSubstr("valid parameters: m, n, k, batch"));
  }
  try {
    parse_params(mm, {"m=4", "k=4"});
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("needs parameter n"));
  }
  EXPECT_THROW(parse_params(mm, {"m=4", "n=4", "k"}), UserError);
  EXPECT_THROW(parse_params(mm, {"m=4", "m=5", "n=4", "k=4"}), UserError);
  EXPECT_THROW(parse_params(mm, {"m=", "n=4", "k=4"}), UserError);
  Params bad = parse_params(mm, {"m=4x", "n=4", "k=4"});
  try {
    mm.build(bad);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("parameter m: '4x' is not an integer"));
  }
}

TEST(Registry, DefaultsAndCanonicalString) {
  const OpDef& mm = find_op("matmul");
  Params p = parse_params(mm, {"m=1024", "n=1024", "k=1024"});
  EXPECT_EQ(p.get("batch"), "1");
  EXPECT_EQ(p.get("dtype"), "float32");
  EXPECT_EQ(p.str(), "batch=1 batch_b=same dtype=float32 k=1024 m=1024 n=1024 transpose_b=0 wblock=0");
  te::ComputeDAG dag = mm.build(p);
  EXPECT_EQ(dag.inputs().size(), 2u);
  EXPECT_EQ(dag.flops(), 2.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(op_usage(mm).substr(0, 31), "matmul m=<m> n=<n> k=<k> [batch");
}

TEST(Registry, ParamsGetters) {
  Params p({{"s", "1x64x56x56"},
            {"l", "0, 2,-1"},
            {"f", "1e-5"},
            {"b", "true"},
            {"ss", "2x3,4"},
            {"n", "none"},
            {"t", "int8"},
            {"x", "abc"}});
  EXPECT_EQ(p.get_shape("s"), (std::vector<int64_t>{1, 64, 56, 56}));
  EXPECT_EQ(p.get_ints("l"), (std::vector<int64_t>{0, 2, -1}));
  EXPECT_DOUBLE_EQ(p.get_float("f"), 1e-5);
  EXPECT_TRUE(p.get_bool("b"));
  EXPECT_EQ(p.get_shapes("ss"), (std::vector<std::vector<int64_t>>{{2, 3}, {4}}));
  EXPECT_TRUE(p.get_ints("n").empty());
  EXPECT_EQ(p.get_dtype("t"), te::DataType::i8());
  EXPECT_THROW(p.get_shape("l"), UserError);
  EXPECT_THROW(p.get_shape("x"), UserError);
  EXPECT_THROW(p.get_float("x"), UserError);
  EXPECT_THROW(p.get_bool("x"), UserError);
  EXPECT_THROW(p.get_dtype("x"), UserError);
  EXPECT_THROW(p.get("missing"), UserError);
  EXPECT_THROW(Params(std::map<std::string, std::string>{{"s", "2x0"}}).get_shape("s"), UserError);
}

TEST(Registry, StructuralHash) {
  auto hash = [](const std::string& op, std::vector<std::string> kv) {
    const OpDef& d = find_op(op);
    return d.build(parse_params(d, kv)).structural_hash();
  };
  // Same op and params: same workload, however often it is built.
  EXPECT_EQ(hash("matmul", {"m=8", "n=4", "k=3"}), hash("matmul", {"k=3", "m=8", "n=4"}));
  EXPECT_EQ(hash("conv2d", {"c=3", "h=8", "w=8", "k=4", "pad=1"}),
            hash("conv2d", {"c=3", "h=8", "w=8", "k=4", "pad=1"}));
  // Shapes, dtypes and attributes all change the identity.
  EXPECT_NE(hash("matmul", {"m=8", "n=4", "k=3"}), hash("matmul", {"m=8", "n=4", "k=5"}));
  EXPECT_NE(hash("matmul", {"m=8", "n=4", "k=3"}),
            hash("matmul", {"m=8", "n=4", "k=3", "dtype=int32"}));
  EXPECT_NE(hash("conv2d", {"c=3", "h=8", "w=8", "k=4"}),
            hash("conv2d", {"c=3", "h=8", "w=8", "k=4", "stride=2"}));
  EXPECT_NE(hash("clip", {"shape=8"}), hash("clip", {"shape=8", "max=5"}));
  EXPECT_NE(hash("relu", {"shape=8x4"}), hash("relu", {"shape=4x8"}));
  EXPECT_NE(hash("add", {"a=8", "b=8"}), hash("add", {"a=8", "b=8", "dtype=float16"}));
}

TEST(Registry, MakeInputsIsSeededAndValid) {
  for (auto& op : op_registry()) {
    SCOPED_TRACE(op.name);
    std::vector<OpCase> all;
    for (auto* table : {&nn_cases, &elementwise_cases, &reduce_cases, &transform_cases})
      for (auto& c : (*table)())
        if (c.op == op.name) all.push_back(c);
    ASSERT_FALSE(all.empty());
    Params p = parse_params(op, all[0].params);
    te::ComputeDAG dag = op.build(p);
    auto a = op.make_inputs(p, dag, 11), b = op.make_inputs(p, dag, 11);
    ASSERT_EQ(a.size(), dag.inputs().size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].shape, dag.inputs()[i].shape());
      EXPECT_EQ(a[i].dtype, dag.inputs()[i].dtype());
      EXPECT_TRUE(compare(a[i], b[i], 0, 0).ok);
    }
  }
}

TEST(Registry, BadShapesThroughTheRegistry) {
  auto build = [](const std::string& op, std::vector<std::string> kv) {
    const OpDef& d = find_op(op);
    return d.build(parse_params(d, kv));
  };
  try {
    build("conv2d", {"c=6", "h=8", "w=8", "k=4", "groups=4"});
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("divisible by groups"));
  }
  EXPECT_THROW(build("conv2d", {"c=3", "h=2", "w=2", "k=4"}), UserError);
  EXPECT_THROW(build("add", {"a=2x3", "b=3x2"}), UserError);
  EXPECT_THROW(build("softmax", {"shape=4x4", "axis=2"}), UserError);
  EXPECT_THROW(build("layer_norm", {"shape=4x4", "axes=0"}), UserError);
  EXPECT_THROW(build("reshape", {"shape=4x4", "to=3,5"}), UserError);
  EXPECT_THROW(build("max_pool2d", {"c=1", "h=4", "w=4", "pad=2"}), UserError);
  EXPECT_THROW(build("relu", {"shape=4x0"}), UserError);
  EXPECT_THROW(build("relu", {"shape=4", "dtype=float64"}), UserError);
  EXPECT_THROW(build("log", {"shape=4", "dtype=int32"}), UserError);
  EXPECT_THROW(build("conv2d", {"c=3", "h=8", "w=8", "k=4", "stride=1,2,3"}), UserError);
}

}  // namespace tuner::ops::testing
