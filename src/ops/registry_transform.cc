// Registry entries of the data-movement ops.
#include "ops/reference.h"
#include "ops/registry_impl.h"
#include "ops/transform.h"

namespace tuner::ops::detail {

namespace {

using te::ComputeDAG;

// An op over one input "x" of parameter "shape": only the te and reference bodies differ.
OpDef one_input_op(const std::string& name, const std::string& help,
                   std::vector<OpParam> params,
                   std::function<te::Tensor(const Params&, const te::Tensor&)> fn,
                   std::function<HostTensor(const Params&, const HostTensor&)> ref_fn) {
  OpDef d;
  d.name = name;
  d.help = help;
  d.params = {{"shape", "", "input shape"}};
  d.params.insert(d.params.end(), params.begin(), params.end());
  d.params.push_back(dtype_param());
  d.build = [fn](const Params& p) {
    te::Tensor x = te::placeholder(p.get_shape("shape"), p.get_dtype("dtype"), "x");
    return ComputeDAG({x}, {fn(p, x)});
  };
  d.reference = [ref_fn](const Params& p, const std::vector<HostTensor>& in) {
    return std::vector<HostTensor>{ref_fn(p, in[0])};
  };
  d.make_inputs = default_inputs;
  return d;
}

}  // namespace

void add_transform_ops(std::vector<OpDef>& ops) {
  ops.push_back(one_input_op(
      "transpose", "permute dimensions: out dim d = in dim perm[d]",
      {{"perm", "", "permutation, e.g. 0,2,1"}},
      [](const Params& p, const te::Tensor& x) { return transpose(x, p.get_ints("perm")); },
      [](const Params& p, const HostTensor& x) { return ref::transpose(x, p.get_ints("perm")); }));

  ops.push_back(one_input_op(
      "reshape", "same row-major elements under a new shape",
      {{"to", "", "target shape as a list, e.g. 4,-1"}},
      [](const Params& p, const te::Tensor& x) { return reshape(x, p.get_ints("to")); },
      [](const Params& p, const HostTensor& x) { return ref::reshape(x, p.get_ints("to")); }));

  ops.push_back(one_input_op(
      "pad", "constant padding",
      {{"pads", "", "begins then ends per dim (ONNX order), e.g. 0,1,0,2"},
       {"value", "0", "padding value"}},
      [](const Params& p, const te::Tensor& x) {
        return pad(x, p.get_ints("pads"), p.get_float("value"));
      },
      [](const Params& p, const HostTensor& x) {
        return ref::pad(x, p.get_ints("pads"), p.get_float("value"));
      }));

  ops.push_back(one_input_op(
      "slice", "ONNX Slice (negative indices wrap, ends clamp, negative steps)",
      {{"starts", "", "start per sliced axis"},
       {"ends", "", "end per sliced axis"},
       {"axes", "none", "sliced axes (none = leading axes)"},
       {"steps", "1", "step per sliced axis (one value = all)"}},
      [](const Params& p, const te::Tensor& x) {
        return slice(x, p.get_ints("starts"), p.get_ints("ends"), p.get_ints("axes"),
                     p.get_ints("steps"));
      },
      [](const Params& p, const HostTensor& x) {
        return ref::slice(x, p.get_ints("starts"), p.get_ints("ends"), p.get_ints("axes"),
                          p.get_ints("steps"));
      }));

  OpDef cc;
  cc.name = "concat";
  cc.help = "concatenation along an axis";
  cc.params = {{"shapes", "", "input shapes, e.g. 2x3,2x5"}, {"axis", "0", "axis"}, dtype_param()};
  cc.build = [](const Params& p) {
    std::vector<te::Tensor> in;
    for (auto& s : p.get_shapes("shapes"))
      in.push_back(te::placeholder(s, p.get_dtype("dtype"), "x" + std::to_string(in.size())));
    return ComputeDAG(in, {concat(in, p.get_int("axis"))});
  };
  cc.reference = [](const Params& p, const std::vector<HostTensor>& in) {
    return std::vector<HostTensor>{ref::concat(in, p.get_int("axis"))};
  };
  cc.make_inputs = default_inputs;
  ops.push_back(cc);

  OpDef g;
  g.name = "gather";
  g.help = "ONNX Gather: data entries along an axis picked by integer indices";
  g.params = {{"shape", "", "data shape"},
              {"indices", "", "indices shape (scalar for one index)"},
              {"axis", "0", "gathered axis"},
              {"index_dtype", "int64", "int64 or int32"},
              dtype_param()};
  g.build = [](const Params& p) {
    te::Tensor data = te::placeholder(p.get_shape("shape"), p.get_dtype("dtype"), "data");
    te::Tensor idx = te::placeholder(p.get_shape("indices"), p.get_dtype("index_dtype"), "indices");
    return ComputeDAG({data, idx}, {gather(data, idx, p.get_int("axis"))});
  };
  g.reference = [](const Params& p, const std::vector<HostTensor>& in) {
    return std::vector<HostTensor>{ref::gather(in[0], in[1], p.get_int("axis"))};
  };
  g.make_inputs = [](const Params& p, const ComputeDAG& dag, uint64_t seed) {
    // Valid indices in [-dim, dim): negative ones exercise the wrap-around.
    const te::Tensor& data = dag.inputs()[0];
    int64_t dim = data.shape()[normalize_axis(p.get_int("axis"), data.ndim(), "gather")];
    Rng rng(seed);
    HostTensor d = HostTensor::random(data.shape(), data.dtype(), rng, -1, 1);
    HostTensor i = HostTensor::random(dag.inputs()[1].shape(), dag.inputs()[1].dtype(), rng,
                                      double(-dim), double(dim - 1));
    return std::vector<HostTensor>{d, i};
  };
  ops.push_back(g);
}

}  // namespace tuner::ops::detail
