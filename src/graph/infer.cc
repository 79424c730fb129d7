#include "graph/infer.h"

#include <algorithm>

#include "graph/converters.h"
#include "ops/te_eval.h"
#include "support/error.h"

namespace tuner::graph {

std::vector<te::Tensor> input_placeholders(const Graph& g, const Node& n) {
  const Converter* c = find_converter(n.op);
  INTERNAL_CHECK(c) << "no converter for " << n.op;
  std::vector<te::Tensor> out(n.inputs.size());
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (n.inputs[i] < 0) continue;
    if (std::count(c->constant_inputs.begin(), c->constant_inputs.end(), int(i))) continue;
    const Value& v = g.values[n.inputs[i]];
    if (v.is_constant() && v.num_elements() == 0) continue;  // no tensor: see empty_constant
    // Named after the model's tensor, as the converters' messages name their operands; quoted,
    // so no name a converter gives its stages can equal it (a DAG's names are unique).
    std::string name = v.name.empty() ? "in" + std::to_string(i) : "'" + v.name + "'";
    for (size_t j = 0; j < i; ++j)
      if (out[j] && out[j].name() == name) name += "#" + std::to_string(i);  // Add(x, x)
    out[i] = te::placeholder(v.shape, v.dtype, name);
  }
  return out;
}

int infer_and_fold(Graph& g) {
  int folded = 0;
  for (Node& n : g.nodes) {
    if (n.dead) continue;
    std::vector<te::Tensor> ins = input_placeholders(g, n);
    std::vector<ConvertOutput> outs = convert_node(g, n, ins, "t");
    // Constant when every tensor input is.
    bool all_const = true;
    std::vector<te::Tensor> dag_inputs;
    std::vector<ops::HostTensor> dag_data;
    for (size_t i = 0; i < ins.size(); ++i) {
      if (!ins[i]) continue;
      const Value& v = g.values[n.inputs[i]];
      if (!v.is_constant()) {
        all_const = false;
        break;
      }
      dag_inputs.push_back(ins[i]);
      dag_data.push_back(*v.data);
    }
    std::vector<te::Tensor> computed;
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      Value& v = g.values[n.outputs[k]];
      if (auto* data = std::get_if<ops::HostTensor>(&outs[k])) {
        v.shape = data->shape;
        v.dtype = data->dtype;
        v.data = std::make_shared<const ops::HostTensor>(std::move(*data));
      } else {
        const te::Tensor& t = std::get<te::Tensor>(outs[k]);
        v.shape = t.shape();
        v.dtype = t.dtype();
        computed.push_back(t);
      }
    }
    if (all_const && !computed.empty()) {
      te::ComputeDAG dag(dag_inputs, computed);
      std::vector<ops::HostTensor> results = ops::evaluate_dag(dag, dag_data);
      size_t r = 0;
      for (size_t k = 0; k < n.outputs.size(); ++k)
        if (std::holds_alternative<te::Tensor>(outs[k]))
          g.values[n.outputs[k]].data =
              std::make_shared<const ops::HostTensor>(std::move(results[r++]));
    }
    bool outputs_const = std::all_of(n.outputs.begin(), n.outputs.end(),
                                     [&](int v) { return g.values[v].is_constant(); });
    if (outputs_const && n.op == "DequantizeLinear" && (!n.attrs.count("block_size") || n.attrs.at("block_size").i == 0)) {
      auto d = std::make_shared<Dequantized>();
      auto input = [&](size_t i) {
        return i < n.inputs.size() && n.inputs[i] >= 0 ? g.values[size_t(n.inputs[i])].data : nullptr;
      };
      d->q = input(0), d->scale = input(1), d->zero_point = input(2);
      d->axis = n.attrs.count("axis") ? n.attrs.at("axis").i : 1;
      g.values[size_t(n.outputs[0])].dequantized = std::move(d);
    }
    if (outputs_const) {
      n.dead = true;
      for (int v : n.outputs) g.values[v].producer = -1;
      ++folded;
    }
  }
  return folded;
}

}  // namespace tuner::graph
