#include "graph/evaluate.h"

#include <memory>

#include "graph/converters.h"
#include "graph/infer.h"
#include "ops/te_eval.h"
#include "support/error.h"

namespace tuner::graph {

using Data = std::shared_ptr<const ops::HostTensor>;

std::vector<ops::HostTensor> evaluate_graph(const Graph& g,
                                            const std::vector<ops::HostTensor>& inputs) {
  USER_CHECK(inputs.size() == g.inputs.size())
      << "graph " << g.name << " takes " << g.inputs.size() << " inputs, got " << inputs.size();
  // Every value's data: constants from the graph, the rest as nodes compute them.
  std::vector<Data> data(g.values.size());
  for (size_t v = 0; v < g.values.size(); ++v) data[v] = g.values[v].data;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = g.values[g.inputs[i]];
    USER_CHECK(inputs[i].shape == v.shape && inputs[i].dtype == v.dtype)
        << "input '" << v.name << "' must be " << v.dtype.str() << "[" << te::shape_str(v.shape)
        << "], got " << inputs[i].dtype.str() << "[" << te::shape_str(inputs[i].shape) << "]";
    data[g.inputs[i]] = std::make_shared<const ops::HostTensor>(inputs[i]);
  }

  for (const Node& n : g.nodes) {
    if (n.dead) continue;
    std::vector<te::Tensor> ins = input_placeholders(g, n);
    std::vector<ConvertOutput> outs = convert_node(g, n, ins, "t");
    std::vector<te::Tensor> dag_inputs, computed;
    std::vector<ops::HostTensor> dag_data;
    for (size_t i = 0; i < ins.size(); ++i) {
      if (!ins[i]) continue;
      INTERNAL_CHECK(data[n.inputs[i]]) << describe(n) << ": input " << i << " not computed";
      dag_inputs.push_back(ins[i]);
      dag_data.push_back(*data[n.inputs[i]]);
    }
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      if (auto* t = std::get_if<te::Tensor>(&outs[k])) computed.push_back(*t);
      else data[n.outputs[k]] = std::make_shared<const ops::HostTensor>(
               std::move(std::get<ops::HostTensor>(outs[k])));
    }
    if (computed.empty()) continue;
    std::vector<ops::HostTensor> results =
        ops::evaluate_dag(te::ComputeDAG(dag_inputs, computed), dag_data);
    size_t r = 0;
    for (size_t k = 0; k < n.outputs.size(); ++k)
      if (std::holds_alternative<te::Tensor>(outs[k]))
        data[n.outputs[k]] = std::make_shared<const ops::HostTensor>(std::move(results[r++]));
  }

  std::vector<ops::HostTensor> out;
  for (int v : g.outputs) {
    INTERNAL_CHECK(data[v]) << "output '" << g.values[v].name << "' was never computed";
    out.push_back(*data[v]);
  }
  return out;
}

}  // namespace tuner::graph
