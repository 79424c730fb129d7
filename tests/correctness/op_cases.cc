#include "op_cases.h"

#include "ops/registry.h"

namespace tuner::testing {

namespace {

const OpCases kUnary = {{"shape=67"}, {"shape=1x1x7x1"}, {"shape=3x5x33"}};
const OpCases kBinary = {{"a=5x67", "b=5x67"}, {"a=3x1x7", "b=1x4x1"}, {"a=2x3x17", "b=17"}};

}  // namespace

const std::map<std::string, OpCases>& op_cases() {
  static const std::map<std::string, OpCases> m = {
      {"abs", kUnary}, {"exp", kUnary}, {"log", kUnary}, {"sqrt", kUnary}, {"erf", kUnary},
      {"gelu", kUnary}, {"relu", kUnary}, {"neg", kUnary}, {"sigmoid", kUnary}, {"silu", kUnary},
      {"tanh", kUnary}, {"hardswish", kUnary},
      {"hardsigmoid", {{"shape=67"}, {"shape=1x1x7x1", "alpha=0.3", "beta=0.4"}, {"shape=3x5x33"}}},
      {"leaky_relu", {{"shape=67"}, {"shape=1x1x7x1", "alpha=0.2"}, {"shape=3x5x33"}}},
      {"clip", {{"shape=67"}, {"shape=1x1x7x1", "min=-0.5", "max=0.25"}, {"shape=3x5x33"}}},
      {"cast", {{"shape=67", "to=int32"}, {"shape=1x7x1", "from=int32", "to=float32"},
                {"shape=3x5x33", "to=int8"}}},
      {"add", kBinary}, {"sub", kBinary}, {"mul", kBinary}, {"pow", kBinary},
      {"div", {{"a=5x67", "b=5x67"}, {"a=3x1x7", "b=1x4x1"}, {"a=7x13", "b=13", "dtype=int32"}}},
      {"maximum", kBinary}, {"minimum", kBinary}, {"equal", kBinary}, {"less", kBinary},
      {"greater", kBinary},
      {"where", {{"cond=5x67", "a=5x67", "b=5x67"}, {"cond=3x1x7", "a=1x4x1", "b=7"},
                 {"cond=1", "a=2x3x17", "b=17"}}},
      {"matmul", {{"m=67", "n=129", "k=95"}, {"m=1", "n=1000", "k=512"}, {"m=64", "n=40", "k=9"},
                  {"m=5", "n=7", "k=3", "batch=3"}, {"m=8", "n=33", "k=16", "transpose_b=1"},
                  // B packed into column panels (pack_matmul_weights).
                  {"m=9", "n=64", "k=40", "wblock=32"}, {"m=5", "n=48", "k=7", "batch=3", "batch_b=none", "wblock=16"},
                  // Rows no tile divides (ViT's 197 tokens): even tiles, a shorter last one.
                  {"m=197", "n=64", "k=24", "wblock=32"},
                  // Columns no divisor fills half a vector of: whole vectors and 5 lanes.
                  {"m=4", "n=197", "k=8"}}},
      {"dense", {{"m=1", "n=1000", "k=512"}, {"m=3", "n=40", "k=64", "bias=0"}, {"m=7", "n=33", "k=65", "bias=0"},
                 {"m=16", "n=16", "k=1"}}},
      {"conv2d", {{"c=3", "h=17", "w=19", "k=5", "stride=2", "pad=1"},
                  {"c=32", "h=28", "w=28", "k=64", "stride=2", "pad=1"},
                  {"c=8", "h=9", "w=9", "k=8", "kh=1", "kw=1"},
                  {"c=8", "h=11", "w=10", "k=4", "groups=2", "dilation=2", "pad=2", "bias=1"},
                  {"n=2", "c=4", "h=7", "w=7", "k=6", "kh=7", "kw=7", "pad=3"},
                  // Packed weights (the CPU layout of pack_conv_weights).
                  {"c=3", "h=17", "w=19", "k=32", "stride=2", "pad=1", "wblock=32"},
                  {"c=16", "h=14", "w=14", "k=48", "pad=1", "bias=1", "wblock=16"},
                  {"c=8", "h=7", "w=5", "k=16", "kh=1", "kw=1", "wblock=8"},
                  {"c=3", "h=30", "w=30", "k=32", "kh=7", "kw=7", "stride=2", "pad=3", "wblock=16"},
                  // Grouped, each block within a group: 16 and 32 channels per group (resnext).
                  {"c=64", "h=14", "w=14", "k=64", "pad=1", "groups=4", "wblock=16"},
                  {"c=64", "h=7", "w=7", "k=128", "stride=2", "pad=1", "groups=4", "bias=1", "wblock=16"},
                  {"c=48", "h=9", "w=11", "k=48", "pad=1", "groups=3", "wblock=8"},
                  {"c=64", "h=14", "w=14", "k=64", "stride=2", "pad=1", "groups=8", "wblock=8"},
                  // 3x3 stride 2 with 16 registers: tiles of 2 rows x 2 pixels x 2 blocks.
                  {"c=16", "h=28", "w=28", "k=32", "stride=2", "pad=1", "bias=1", "wblock=8"},
                  // Rows split among threads (schedule::split_rows_among_threads).
                  {"n=2", "c=4", "h=30", "w=9", "k=12", "kh=1", "kw=1", "bias=1"},
                  {"c=4", "h=28", "w=12", "k=16", "pad=1", "wblock=8"},
                  {"c=16", "h=56", "w=24", "k=32", "stride=2", "pad=1", "wblock=8"},
                  // Widths no tile divides: a shorter last tile with 32 registers (13 = 7 + 6).
                  {"c=8", "h=13", "w=13", "k=32", "pad=1", "bias=1", "wblock=32"},
                  {"c=4", "h=5", "w=27", "k=16", "pad=1", "wblock=16"},
                  // Rows no divisor fills half a vector: whole vectors and an odd last block.
                  {"c=4", "h=3", "w=73", "k=8", "kh=1", "kw=1", "bias=1"},
                  // Divisors no power of two (27 = 3 x 9): 16 + 11.
                  {"c=4", "h=3", "w=27", "k=8", "kh=1", "kw=1"},
                  // Dilated taps reading only padding on some rows, or on all (the centre
                  // tap alone): clip_guarded_reduction_loops skips them.
                  {"c=8", "h=9", "w=10", "k=16", "pad=6", "dilation=6", "bias=1", "wblock=16"},
                  {"c=8", "h=6", "w=6", "k=16", "pad=7", "dilation=7", "wblock=16"},
                  {"c=4", "h=5", "w=7", "k=4", "pad=4", "dilation=4", "bias=1"}}},
      {"depthwise_conv2d", {{"c=8", "h=15", "w=15", "stride=2", "pad=1"},
                            {"c=3", "h=7", "w=9", "multiplier=2"}, {"c=1", "h=5", "w=5", "bias=1"},
                            // Partial last vector blocks: 56 = 3 x 16 + 8, 20 = 16 + 4.
                            {"c=16", "h=112", "w=112", "stride=2", "pad=1", "bias=1"},
                            {"c=16", "h=20", "w=20", "pad=1"}, {"c=4", "h=5", "w=37", "pad=1"},
                            // 5x5 and 7x7 windows, padding inline (efficientnet, convnext).
                            {"c=16", "h=28", "w=28", "kh=5", "kw=5", "stride=2", "pad=2"},
                            {"c=8", "h=14", "w=14", "kh=5", "kw=5", "pad=2", "bias=1"},
                            {"c=16", "h=7", "w=7", "kh=7", "kw=7", "pad=3"},
                            {"c=4", "h=6", "w=55", "pad=1", "bias=1"},  // 3 x 16 + 7
                            {"c=16", "h=9", "w=9", "pad=5", "dilation=5"}}},
      {"max_pool2d", {{"c=3", "h=17", "w=17", "kernel=3", "stride=2", "pad=1"},
                      {"c=16", "h=60", "w=60", "kernel=3", "stride=1", "pad=1"},
                      {"c=2", "h=7", "w=8", "kernel=2", "stride=2", "ceil_mode=1"},
                      {"c=2", "h=9", "w=111", "kernel=3", "stride=2", "ceil_mode=1"},  // 55 wide
                      // Windows of 25+: a pass along the rows, then down the columns.
                      {"c=4", "h=20", "w=20", "kernel=13", "stride=1", "pad=6"},
                      {"c=3", "h=11", "w=13", "kernel=5", "stride=2", "pad=1", "ceil_mode=1"},
                      {"c=2", "h=12", "w=13", "kernel=5", "stride=1"},  // no padding stage
                      {"n=2", "c=1", "h=1", "w=5", "kernel=1", "stride=1"}}},
      {"avg_pool2d", {{"c=3", "h=17", "w=17", "kernel=3", "stride=2", "pad=1"},
                      {"c=2", "h=7", "w=8", "kernel=2", "stride=2", "ceil_mode=1", "count_include_pad=1"},
                      {"n=2", "c=1", "h=1", "w=5", "kernel=1", "stride=1"}}},
      {"global_avg_pool", {{"c=5", "h=7", "w=7"}, {"n=2", "c=1", "h=1", "w=1"}, {"c=64", "h=3", "w=5"},
                           {"c=6", "h=14", "w=14"}, {"c=3", "h=9", "w=56"}}},
      {"global_max_pool", {{"c=5", "h=7", "w=7"}, {"n=2", "c=1", "h=1", "w=1"}, {"c=64", "h=3", "w=5"},
                           {"c=3", "h=5", "w=28"}}},
      {"winograd_input", {{"c=3", "h=9", "w=11"}, {"n=2", "c=4", "h=14", "w=14", "pad=0"}, {"c=2", "h=70", "w=70"}}},
      {"winograd_output", {{"c=3", "h=9", "w=11", "k=16", "bias=1"}, {"n=2", "c=4", "h=14", "w=14", "k=5", "pad=0"},
                           {"c=2", "h=70", "w=70", "k=16"}}},
      {"winograd_conv", {{"c=3", "h=9", "w=11", "k=16", "bias=1"}, {"n=2", "c=4", "h=14", "w=14", "k=5", "pad=0"},
                         {"c=2", "h=70", "w=70", "k=16"}}},
      {"softmax", {{"shape=8x67"}, {"shape=1x1"}, {"shape=3x5x7", "axis=1"}, {"shape=6x197"}}},
      {"log_softmax", {{"shape=8x67"}, {"shape=1x1"}, {"shape=3x5x7", "axis=1"}, {"shape=5x39"}}},
      {"layer_norm", {{"shape=8x67"}, {"shape=1x3"}, {"shape=2x3x5x7", "axes=-2,-1"}, {"shape=3x197"}}},
      {"softmax_layer_norm", {{"shape=8x67"}, {"shape=1x3"}, {"shape=2x3x17"}}},
      // axes=all: a rank-0 result (a one-element buffer addressed with no indices).
      {"reduce_sum", {{"shape=8x67"}, {"shape=1x1x5", "axes=0,2", "keepdims=1"}, {"shape=3x5x7", "axes=1"},
                      {"shape=5x7", "axes=all"}}},
      {"reduce_mean", {{"shape=8x67"}, {"shape=1x1x5", "axes=0,2", "keepdims=1"}, {"shape=3x5x7", "axes=1"},
                       {"shape=5x7", "axes=all"}}},
      {"reduce_max", {{"shape=8x67"}, {"shape=1x1x5", "axes=0,2", "keepdims=1"}, {"shape=3x5x7", "axes=1"},
                      {"shape=4x197"}}},
      {"reduce_min", {{"shape=8x67"}, {"shape=1x1x5", "axes=0,2", "keepdims=1"}, {"shape=3x5x7", "axes=1"}}},
      {"transpose", {{"shape=5x67", "perm=1,0"}, {"shape=1x3x1x7", "perm=3,1,0,2"}, {"shape=2x3x4", "perm=0,2,1"}}},
      {"reshape", {{"shape=5x67", "to=67,5"}, {"shape=1x3x1x7", "to=21"}, {"shape=2x3x4", "to=4,1,6"}}},
      {"concat", {{"shapes=2x3,2x5", "axis=1"}, {"shapes=1x7,3x7,1x7", "axis=0"}, {"shapes=2x1x3,2x1x3", "axis=2"}}},
      {"pad", {{"shape=5x7", "pads=1,2,3,0"}, {"shape=1x3x1", "pads=0,0,1,0,0,2", "value=1.5"}, {"shape=67", "pads=3,5"}}},
      {"slice", {{"shape=10x20", "starts=1,2", "ends=8,19"}, {"shape=1x9", "starts=-5", "ends=100", "axes=1", "steps=2"},
                 {"shape=6x7", "starts=5", "ends=-100", "axes=0", "steps=-2"}}},
      {"gather", {{"shape=10x7", "indices=5"}, {"shape=3x9", "indices=2x4", "axis=1"}, {"shape=1x5", "indices=1"}}},
  };
  return m;
}

std::vector<std::string> all_op_names() {
  std::vector<std::string> names;
  for (auto& d : ops::op_registry()) names.push_back(d.name);
  return names;
}

}  // namespace tuner::testing
