// Registry entries of the nn ops.
#include <array>
#include <tuple>

#include "ops/layout.h"
#include "ops/nn.h"
#include "ops/reference.h"
#include "ops/registry_impl.h"
#include "ops/winograd.h"

namespace tuner::ops::detail {

namespace {

using te::ComputeDAG;

// "2" -> (2, 2); "2,3" -> (2, 3).
std::pair<int64_t, int64_t> pair_param(const Params& p, const std::string& key) {
  std::vector<int64_t> v = p.get_ints(key);
  USER_CHECK(v.size() == 1 || v.size() == 2)
      << "parameter " << key << ": expected one value or two (h,w), got '" << p.get(key) << "'";
  return {v[0], v.back()};
}

// "1" -> all sides; "1,2" -> (h, w); "t,l,b,r".
std::array<int64_t, 4> pads_param(const Params& p, const std::string& key) {
  std::vector<int64_t> v = p.get_ints(key);
  if (v.size() == 1) return {v[0], v[0], v[0], v[0]};
  if (v.size() == 2) return {v[0], v[1], v[0], v[1]};
  USER_CHECK(v.size() == 4) << "parameter " << key
                            << ": expected 1, 2 (h,w) or 4 (top,left,bottom,right) values, got '"
                            << p.get(key) << "'";
  return {v[0], v[1], v[2], v[3]};
}

Conv2dAttrs conv_attrs(const Params& p, int64_t groups) {
  Conv2dAttrs a;
  std::tie(a.stride_h, a.stride_w) = pair_param(p, "stride");
  std::tie(a.dilation_h, a.dilation_w) = pair_param(p, "dilation");
  auto pads = pads_param(p, "pad");
  a.pad_top = pads[0], a.pad_left = pads[1], a.pad_bottom = pads[2], a.pad_right = pads[3];
  a.groups = groups;
  return a;
}

Pool2dAttrs pool_attrs(const Params& p) {
  Pool2dAttrs a;
  std::tie(a.kernel_h, a.kernel_w) = pair_param(p, "kernel");
  std::tie(a.stride_h, a.stride_w) = pair_param(p, "stride");
  auto pads = pads_param(p, "pad");
  a.pad_top = pads[0], a.pad_left = pads[1], a.pad_bottom = pads[2], a.pad_right = pads[3];
  a.ceil_mode = p.get_bool("ceil_mode");
  if (p.has("count_include_pad")) a.count_include_pad = p.get_bool("count_include_pad");
  return a;
}

Shape nchw(const Params& p) {
  return {p.get_int("n"), p.get_int("c"), p.get_int("h"), p.get_int("w")};
}

std::vector<OpParam> conv_params(bool depthwise) {
  std::vector<OpParam> v = {{"n", "1", "batch"},
                            {"c", "", "input channels"},
                            {"h", "", "input height"},
                            {"w", "", "input width"}};
  if (depthwise) v.push_back({"multiplier", "1", "output channels per input channel"});
  else v.push_back({"k", "", "output channels"});
  v.insert(v.end(), {{"kh", "3", "kernel height"},
                     {"kw", "3", "kernel width"},
                     {"stride", "1", "stride: s or sh,sw"},
                     {"pad", "0", "zero padding: p, ph,pw or top,left,bottom,right"},
                     {"dilation", "1", "dilation: d or dh,dw"}});
  if (!depthwise) {
    v.push_back({"groups", "1", "channel groups"});
    v.push_back({"wblock", "0", "pack the weight by blocks of b output channels (0: KCRS)"});
  }
  v.push_back({"bias", "0", "add a bias [K] (0/1)"});
  v.push_back(dtype_param());
  return v;
}

// conv2d and depthwise_conv2d share everything but how K and groups are derived.
OpDef conv_op(bool depthwise) {
  auto geometry = [depthwise](const Params& p) {
    int64_t c = p.get_int("c");
    int64_t groups = depthwise ? c : p.get_int("groups");
    int64_t k = p.get_int(depthwise ? "multiplier" : "k");
    USER_CHECK(k > 0) << (depthwise ? "depthwise_conv2d: multiplier=" : "conv2d: k=") << k
                      << " must be positive";
    USER_CHECK(!depthwise || !__builtin_mul_overflow(c, k, &k))
        << "depthwise_conv2d: c * multiplier overflows 64 bits";
    // max(1, ...) so that a bad group count is reported by the shape check, not as a 0 dim.
    Shape weight = {k, std::max<int64_t>(1, groups > 0 ? c / groups : 1), p.get_int("kh"),
                    p.get_int("kw")};
    int64_t block = depthwise ? 0 : p.get_int("wblock");
    if (block != 0) {
      USER_CHECK(block > 0 && groups > 0 && k % groups == 0 && (k / groups) % block == 0)
          << "conv2d: wblock=" << block << " must be positive and divide the output channels per group (k="
          << k << ", groups=" << groups << ")";
      weight = packed_weight_shape(weight, block);
    }
    return std::make_pair(weight, conv_attrs(p, groups));
  };
  OpDef d;
  d.name = depthwise ? "depthwise_conv2d" : "conv2d";
  d.help = depthwise ? "depthwise NCHW conv2d (groups = c)" : "NCHW conv2d, weight KCRS, groups";
  d.params = conv_params(depthwise);
  d.build = [geometry, name = d.name](const Params& p) {
    auto [wshape, attrs] = geometry(p);
    Shape ds = nchw(p);
    conv2d_shape(ds, wshape, attrs, name);  // the clear error before any placeholder complains
    te::DataType dt = p.get_dtype("dtype");
    te::Tensor data = te::placeholder(ds, dt, "data");
    te::Tensor weight = te::placeholder(wshape, dt, "weight");
    std::vector<te::Tensor> in = {data, weight};
    int64_t k = wshape.size() == 5 ? wshape[0] * wshape[4] : wshape[0];
    if (p.get_bool("bias")) in.push_back(te::placeholder({k}, dt, "bias"));
    return ComputeDAG(in, in_float32(in, [&](const std::vector<te::Tensor>& w) {
                        return std::vector{conv2d(w[0], w[1], attrs, w.size() > 2 ? w[2] : te::Tensor(), name)};
                      }));
  };
  d.reference = [geometry](const Params& p, const std::vector<HostTensor>& in) {
    auto attrs = geometry(p).second;
    HostTensor bias = in.size() > 2 ? in[2] : HostTensor();
    return std::vector<HostTensor>{ref::conv2d(in[0], in[1], attrs, bias)};
  };
  d.make_inputs = default_inputs;
  return d;
}

OpDef pool_op(const std::string& name, bool avg) {
  OpDef d;
  d.name = name;
  d.help = avg ? "NCHW average pooling" : "NCHW max pooling";
  d.params = {{"n", "1", "batch"},
              {"c", "", "channels"},
              {"h", "", "input height"},
              {"w", "", "input width"},
              {"kernel", "2", "window: k or kh,kw"},
              {"stride", "2", "stride: s or sh,sw"},
              {"pad", "0", "padding: p, ph,pw or top,left,bottom,right"},
              {"ceil_mode", "0", "round the output size up (0/1)"}};
  if (avg) d.params.push_back({"count_include_pad", "0", "divide by the padded window (0/1)"});
  d.params.push_back(dtype_param());
  d.build = [avg, name](const Params& p) {
    te::Tensor data = te::placeholder(nchw(p), p.get_dtype("dtype"), "data");
    Pool2dAttrs a = pool_attrs(p);
    if (!avg) return ComputeDAG({data}, {max_pool2d(data, a, name)});
    return ComputeDAG({data}, in_float32({data}, [&](const std::vector<te::Tensor>& w) {
                        return std::vector{avg_pool2d(w[0], a, name)};
                      }));
  };
  d.reference = [avg](const Params& p, const std::vector<HostTensor>& in) {
    Pool2dAttrs a = pool_attrs(p);
    return std::vector<HostTensor>{avg ? ref::avg_pool2d(in[0], a) : ref::max_pool2d(in[0], a)};
  };
  d.make_inputs = default_inputs;
  return d;
}

OpDef global_pool_op(const std::string& name, bool avg) {
  OpDef d;
  d.name = name;
  d.help = avg ? "mean over H and W of NCHW data" : "max over H and W of NCHW data";
  d.params = {{"n", "1", "batch"}, {"c", "", "channels"}, {"h", "", "height"},
              {"w", "", "width"},  dtype_param()};
  d.build = [avg, name](const Params& p) {
    te::Tensor data = te::placeholder(nchw(p), p.get_dtype("dtype"), "data");
    if (!avg) return ComputeDAG({data}, {global_max_pool(data, name)});
    return ComputeDAG({data}, in_float32({data}, [&](const std::vector<te::Tensor>& w) {
                        return std::vector{global_avg_pool(w[0], name)};
                      }));
  };
  d.reference = [avg](const Params&, const std::vector<HostTensor>& in) {
    return std::vector<HostTensor>{avg ? ref::global_avg_pool(in[0]) : ref::global_max_pool(in[0])};
  };
  d.make_inputs = default_inputs;
  return d;
}

// Batch dims of A: "1" means a plain 2-D matmul.
Shape batch_dims(const Params& p) {
  Shape b = p.get_shape("batch");
  return b == Shape{1} ? Shape{} : b;
}

Shape batch_dims_b(const Params& p) {
  const std::string& v = p.get("batch_b");
  if (v == "same") return batch_dims(p);
  if (v == "none") return {};
  return p.get_shape("batch_b");
}

// A Winograd conv (ops/winograd.h): one transform alone, or the whole conv in one kernel.
// The whole conv's float rounding near zero (the transforms scale values up to ~100x, then
// cancel) reaches a few 1e-5 against the reference stages computed in double: its atol is
// 1e-4.
OpDef winograd_op(const std::string& part) {
  OpDef d;
  d.name = "winograd_" + part;
  d.help = part == "input"    ? "Winograd F(4x4,3x3) input transform: NCHW data -> [36, C, tiles]"
           : part == "output" ? "Winograd F(4x4,3x3) output transform: [36, tiles, K] -> NCHW (+ bias)"
                              : "Winograd F(4x4,3x3) conv in one kernel: NCHW data, U [36, C, K] -> NCHW";
  d.params = {{"n", "1", "batch"}, {"c", "", "conv input channels"}, {"h", "", "conv input height"},
              {"w", "", "conv input width"}, {"pad", "1", "the conv's zero padding"}};
  if (part != "input") {
    d.params.push_back({"k", "", "output channels"});
    d.params.push_back({"bias", "0", "add a bias [K] (0/1)"});
  }
  d.params.push_back(dtype_param());
  auto geometry = [](const Params& p) { return WinogradGeometry::make(nchw(p), pads_param(p, "pad")); };
  d.build = [part, geometry](const Params& p) {
    WinogradGeometry g = geometry(p);
    te::DataType dt = p.get_dtype("dtype");
    // Its transforms scale values up to ~100x before they cancel: float16 has no digits left
    // (and the references read float32).
    USER_CHECK(dt == te::DataType::f32())
        << "winograd_" << part << ": dtype must be float32, got " << dt.str();
    if (part == "input") {
      te::Tensor data = te::placeholder(nchw(p), dt, "data");
      return ComputeDAG({data}, {winograd_input(data, g)});
    }
    int64_t k = p.get_int("k"), e = kWinogradAlpha * kWinogradAlpha;
    std::vector<te::Tensor> in;
    if (part == "conv") {
      in.push_back(te::placeholder(nchw(p), dt, "data"));
      in.push_back(te::placeholder({e, g.c, k}, dt, "U"));
    } else {
      in.push_back(te::placeholder({e, g.tiles, k}, dt, "M"));
    }
    te::Tensor bias;
    if (p.get_bool("bias")) in.push_back(bias = te::placeholder({k}, dt, "bias"));
    if (part == "conv") return ComputeDAG(in, {winograd_conv(in[0], in[1], g, bias)});
    return ComputeDAG(in, {winograd_output(in[0], g, bias)});
  };
  d.reference = [part, geometry](const Params& p, const std::vector<HostTensor>& in) {
    WinogradGeometry g = geometry(p);
    if (part == "input") return std::vector<HostTensor>{winograd_input_ref(in[0], g)};
    if (part == "conv") {
      HostTensor m = winograd_product_ref(winograd_input_ref(in[0], g), in[1]);
      return std::vector<HostTensor>{winograd_output_ref(m, g, in.size() > 2 ? in[2] : HostTensor())};
    }
    return std::vector<HostTensor>{winograd_output_ref(in[0], g, in.size() > 1 ? in[1] : HostTensor())};
  };
  d.make_inputs = default_inputs;
  if (part == "conv") {
    // U from a 3x3 weight: a random U lacks G g G^T's small high-order rows and would round
    // far worse than any real conv.
    d.make_inputs = [](const Params& p, const ComputeDAG& dag, uint64_t seed) {
      std::vector<HostTensor> in = random_inputs(dag, seed);
      if (in[1].dtype != te::DataType::f32()) return in;
      Rng rng(seed + 1);
      in[1] = winograd_weight(
          HostTensor::random({p.get_int("k"), p.get_int("c"), 3, 3}, te::DataType::f32(), rng));
      return in;
    };
    d.atol = 1e-4;
  }
  return d;
}

}  // namespace

void add_nn_ops(std::vector<OpDef>& ops) {
  OpDef mm;
  mm.name = "matmul";
  mm.help = "C[batch..., m, n] = A[batch..., m, k] x B[batch..., k, n]";
  mm.params = {{"m", "", "rows of A and C"},
               {"n", "", "columns of B and C"},
               {"k", "", "reduction size"},
               {"batch", "1", "batch dims of A, e.g. 8 or 2x4 (1 = plain 2-D)"},
               {"batch_b", "same", "batch dims of B: same, none or a shape (numpy broadcast)"},
               {"transpose_b", "0", "B is stored [n, k] (0/1)"},
               {"wblock", "0", "B packed [n/wblock, k, wblock] (the layout of pack_matmul_weights; 0 = plain)"},
               dtype_param()};
  mm.build = [](const Params& p) {
    int64_t m = p.get_int("m"), n = p.get_int("n"), k = p.get_int("k"), wb = p.get_int("wblock");
    USER_CHECK(wb >= 0) << "matmul: wblock=" << wb << " must be 0 (plain) or positive";
    bool tb = p.get_bool("transpose_b");
    Shape as = batch_dims(p), bs = batch_dims_b(p);
    as.insert(as.end(), {m, k});
    te::DataType dt = p.get_dtype("dtype");
    if (wb > 0) {
      USER_CHECK(!tb && bs.empty() && n % wb == 0)
          << "matmul: wblock needs transpose_b=0, batch_b=none (or no batch) and n a multiple of wblock";
      te::Tensor a = te::placeholder(as, dt, "A"), b = te::placeholder({n / wb, k, wb}, dt, "B");
      return ComputeDAG({a, b}, in_float32({a, b}, [](const std::vector<te::Tensor>& w) {
                          return std::vector{matmul_packed(w[0], w[1])};
                        }));
    }
    if (tb) bs.insert(bs.end(), {n, k});
    else bs.insert(bs.end(), {k, n});
    te::Tensor a = te::placeholder(as, dt, "A"), b = te::placeholder(bs, dt, "B");
    return ComputeDAG({a, b}, in_float32({a, b}, [tb](const std::vector<te::Tensor>& w) {
                        return std::vector{matmul(w[0], w[1], tb)};
                      }));
  };
  mm.reference = [](const Params& p, const std::vector<HostTensor>& in) {
    if (p.get_int("wblock") > 0) return std::vector<HostTensor>{ref::matmul(in[0], unpack_matmul_weight(in[1]))};
    return std::vector<HostTensor>{ref::matmul(in[0], in[1], p.get_bool("transpose_b"))};
  };
  mm.make_inputs = default_inputs;
  ops.push_back(mm);

  OpDef dn;
  dn.name = "dense";
  dn.help = "out[m, n] = data[m, k] x weight[n, k]^T (+ bias[n])";
  dn.params = {{"m", "", "batch rows"},
               {"n", "", "output units"},
               {"k", "", "input units"},
               {"bias", "1", "add a bias (0/1)"},
               dtype_param()};
  dn.build = [](const Params& p) {
    te::DataType dt = p.get_dtype("dtype");
    int64_t m = p.get_int("m"), n = p.get_int("n"), k = p.get_int("k");
    te::Tensor data = te::placeholder({m, k}, dt, "data");
    te::Tensor w = te::placeholder({n, k}, dt, "weight");
    if (!p.get_bool("bias"))
      return ComputeDAG({data, w}, in_float32({data, w}, [](const std::vector<te::Tensor>& x) {
                          return std::vector{dense(x[0], x[1])};
                        }));
    te::Tensor bias = te::placeholder({n}, dt, "bias");
    return ComputeDAG({data, w, bias}, in_float32({data, w, bias}, [](const std::vector<te::Tensor>& x) {
                        return std::vector{dense(x[0], x[1], x[2])};
                      }));
  };
  dn.reference = [](const Params&, const std::vector<HostTensor>& in) {
    return std::vector<HostTensor>{ref::dense(in[0], in[1], in.size() > 2 ? in[2] : HostTensor())};
  };
  dn.make_inputs = default_inputs;
  ops.push_back(dn);

  ops.push_back(conv_op(false));
  ops.push_back(conv_op(true));
  ops.push_back(pool_op("max_pool2d", false));
  ops.push_back(pool_op("avg_pool2d", true));
  ops.push_back(global_pool_op("global_avg_pool", true));
  ops.push_back(global_pool_op("global_max_pool", false));
  ops.push_back(winograd_op("input"));
  ops.push_back(winograd_op("output"));
  ops.push_back(winograd_op("conv"));
}

}  // namespace tuner::ops::detail
