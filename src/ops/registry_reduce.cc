// Registry entries of the reductions and normalizations.
#include "ops/reduce.h"
#include "ops/reference.h"
#include "ops/registry_impl.h"

namespace tuner::ops::detail {

namespace {

using te::ComputeDAG;

// Random inputs in [-2, 2].
std::vector<HostTensor> reduce_inputs(const Params&, const ComputeDAG& dag, uint64_t seed) {
  return random_inputs(dag, seed, -2, 2);
}

// "all" = every axis (an empty list).
std::vector<int64_t> axes_param(const Params& p) {
  return p.get("axes") == "all" ? std::vector<int64_t>{} : p.get_ints("axes");
}

OpDef reduce_op(const std::string& name, ReduceOp op, const std::string& help) {
  OpDef d;
  d.name = name;
  d.help = help;
  d.params = {{"shape", "", "input shape"},
              {"axes", "-1", "reduced axes, e.g. 1,2 or all"},
              {"keepdims", "0", "keep reduced dimensions as size 1 (0/1)"},
              dtype_param()};
  d.build = [name, op](const Params& p) {
    te::Tensor x = te::placeholder(p.get_shape("shape"), p.get_dtype("dtype"), "x");
    return ComputeDAG({x}, in_float32({x}, [&](const std::vector<te::Tensor>& w) {
                        return std::vector{reduce(w[0], op, axes_param(p), p.get_bool("keepdims"), name)};
                      }));
  };
  d.reference = [op](const Params& p, const std::vector<HostTensor>& in) {
    return std::vector<HostTensor>{ref::reduce(in[0], op, axes_param(p), p.get_bool("keepdims"))};
  };
  d.make_inputs = reduce_inputs;
  return d;
}

OpDef softmax_op(bool log) {
  OpDef d;
  d.name = log ? "log_softmax" : "softmax";
  d.help = log ? "log(softmax(x)) along an axis" : "exp(x) / sum(exp(x)) along an axis";
  d.params = {{"shape", "", "input shape"}, {"axis", "-1", "softmax axis"}, dtype_param()};
  d.build = [log](const Params& p) {
    te::Tensor x = te::placeholder(p.get_shape("shape"), p.get_dtype("dtype"), "x");
    int64_t axis = p.get_int("axis");
    return ComputeDAG({x}, in_float32({x}, [&](const std::vector<te::Tensor>& w) {
                        return std::vector{log ? log_softmax(w[0], axis) : softmax(w[0], axis)};
                      }));
  };
  d.reference = [log](const Params& p, const std::vector<HostTensor>& in) {
    int64_t axis = p.get_int("axis");
    return std::vector<HostTensor>{log ? ref::log_softmax(in[0], axis) : ref::softmax(in[0], axis)};
  };
  d.make_inputs = reduce_inputs;
  return d;
}

// The normalized (trailing) shape of layer_norm's gamma and beta.
Shape norm_shape(const Shape& s, const std::vector<int64_t>& axes, const std::string& op) {
  std::vector<int> ax = trailing_axes(axes, int(s.size()), op);
  return Shape(s.end() - ax.size(), s.end());
}

}  // namespace

void add_reduce_ops(std::vector<OpDef>& ops) {
  ops.push_back(reduce_op("reduce_sum", ReduceOp::Sum, "sum over axes"));
  ops.push_back(reduce_op("reduce_mean", ReduceOp::Mean, "mean over axes"));
  ops.push_back(reduce_op("reduce_max", ReduceOp::Max, "maximum over axes"));
  ops.push_back(reduce_op("reduce_min", ReduceOp::Min, "minimum over axes"));
  ops.push_back(softmax_op(false));
  ops.push_back(softmax_op(true));

  OpDef ln;
  ln.name = "layer_norm";
  ln.help = "(x - mean) / sqrt(var + epsilon) * gamma + beta over the trailing axes";
  ln.params = {{"shape", "", "input shape"},
               {"axes", "-1", "normalized trailing axes, e.g. -2,-1"},
               {"epsilon", "1e-5", "variance epsilon"},
               dtype_param()};
  ln.build = [](const Params& p) {
    te::DataType dt = p.get_dtype("dtype");
    Shape s = p.get_shape("shape");
    std::vector<int64_t> axes = p.get_ints("axes");
    Shape inner = norm_shape(s, axes, "layer_norm");
    te::Tensor x = te::placeholder(s, dt, "x"), gamma = te::placeholder(inner, dt, "gamma");
    te::Tensor beta = te::placeholder(inner, dt, "beta");
    return ComputeDAG({x, gamma, beta}, in_float32({x, gamma, beta}, [&](const std::vector<te::Tensor>& w) {
                        return std::vector{layer_norm(w[0], w[1], w[2], axes, p.get_float("epsilon"))};
                      }));
  };
  ln.reference = [](const Params& p, const std::vector<HostTensor>& in) {
    return std::vector<HostTensor>{
        ref::layer_norm(in[0], in[1], in[2], p.get_ints("axes"), p.get_float("epsilon"))};
  };
  ln.make_inputs = reduce_inputs;
  ops.push_back(ln);

  OpDef sl;
  sl.name = "softmax_layer_norm";
  sl.help = "layer_norm(softmax(x)) over the last axis, one DAG";
  sl.params = {{"shape", "", "input shape"},
               {"epsilon", "1e-5", "variance epsilon"},
               dtype_param()};
  sl.build = [](const Params& p) {
    te::DataType dt = p.get_dtype("dtype");
    Shape s = p.get_shape("shape");
    Shape inner = norm_shape(s, {-1}, "softmax_layer_norm");
    te::Tensor x = te::placeholder(s, dt, "x"), gamma = te::placeholder(inner, dt, "gamma");
    te::Tensor beta = te::placeholder(inner, dt, "beta");
    return ComputeDAG({x, gamma, beta}, in_float32({x, gamma, beta}, [&](const std::vector<te::Tensor>& w) {
                        return std::vector{layer_norm(softmax(w[0], -1), w[1], w[2], {-1}, p.get_float("epsilon"))};
                      }));
  };
  sl.reference = [](const Params& p, const std::vector<HostTensor>& in) {
    return std::vector<HostTensor>{
        ref::layer_norm(ref::softmax(in[0], -1), in[1], in[2], {-1}, p.get_float("epsilon"))};
  };
  sl.make_inputs = reduce_inputs;
  ops.push_back(sl);
}

}  // namespace tuner::ops::detail
