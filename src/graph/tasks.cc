#include "graph/tasks.h"

#include <map>

#include "graph/converters.h"
#include "graph/infer.h"
#include "ops/elementwise.h"
#include "ops/registry.h"
#include "support/error.h"

namespace tuner::graph {

te::ComputeDAG group_dag(const Graph& g, const Group& grp) {
  std::map<int, te::Tensor> tensor_of;
  std::vector<te::Tensor> args;
  for (size_t i = 0; i < grp.inputs.size(); ++i) {
    const Value& v = g.values[grp.inputs[i]];
    args.push_back(te::placeholder(v.shape, v.dtype, "arg" + std::to_string(i)));
    tensor_of[grp.inputs[i]] = args.back();
  }
  // Stages are named by their node's position in the group, not in the graph: a trace names
  // stages, so the records of a task then replay on the same task of any model.
  for (size_t pos = 0; pos < grp.nodes.size(); ++pos) {
    const Node& n = g.nodes[size_t(grp.nodes[pos])];
    std::vector<te::Tensor> ins = input_placeholders(g, n);
    for (size_t i = 0; i < ins.size(); ++i) {
      if (!ins[i]) continue;
      auto it = tensor_of.find(n.inputs[i]);
      INTERNAL_CHECK(it != tensor_of.end()) << describe(n) << ": input " << i << " not computed";
      ins[i] = it->second;
    }
    std::vector<ConvertOutput> outs = convert_node(g, n, ins, "n" + std::to_string(pos));
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      auto* t = std::get_if<te::Tensor>(&outs[k]);
      INTERNAL_CHECK(t) << describe(n) << ": output " << k << " is data inside a fused group";
      tensor_of[n.outputs[k]] = *t;
    }
  }
  std::vector<te::Tensor> outputs;
  for (int v : grp.outputs) {
    te::Tensor t = tensor_of.at(v);
    // A kernel writes its outputs: an output that is just an argument becomes a copy.
    bool is_arg = false;
    for (const auto& a : args) is_arg = is_arg || a == t;
    for (const auto& o : outputs) is_arg = is_arg || o == t;
    if (is_arg) t = ops::map_unary(t, [](const te::Expr& e) { return e; }, "copy");
    outputs.push_back(t);
  }
  return te::ComputeDAG(args, outputs);
}

TaskSet extract_tasks(const Graph& g, const FuseOptions& opts) {
  TaskSet ts;
  ts.in_place_concats = in_place_concats(g);
  ts.groups = fuse(g, opts, ts.in_place_concats);
  std::map<std::string, int> by_hash;
  for (const Group& grp : ts.groups) {
    te::ComputeDAG dag = group_dag(g, grp);
    auto [it, fresh] = by_hash.emplace(dag.hash_hex(), int(ts.tasks.size()));
    if (fresh) ts.tasks.push_back({dag, 0, grp.ops(g), g.nodes[grp.nodes.front()].name});
    ts.tasks[it->second].weight++;
    ts.task_of_group.push_back(it->second);
  }
  return ts;
}

// Random weights can make a task's outputs depend chaotically on rounding: a 50-step LSTM
// with hidden 256 and weights in [-1, 1] keeps no digit in float32 after ~30 steps, so every
// candidate that summed in another order failed the check against the reference.
std::vector<ops::HostTensor> task_inputs(const Graph& g, const TaskSet& ts, size_t task, uint64_t seed) {
  const te::ComputeDAG& dag = ts.tasks.at(task).dag;
  std::vector<ops::HostTensor> in = ops::random_inputs(dag, seed, -1.0, 1.0, 0, 1);
  for (size_t k = 0; k < ts.groups.size(); ++k) {
    if (ts.task_of_group[k] != int(task)) continue;
    const std::vector<int>& values = ts.groups[k].inputs;
    if (values.size() != in.size()) break;
    for (size_t j = 0; j < values.size(); ++j) {
      const Value& v = g.values[size_t(values[j])];
      if (v.is_constant() && v.data->shape == in[j].shape && v.data->dtype == in[j].dtype) in[j] = *v.data;
    }
    break;
  }
  return in;
}

}  // namespace tuner::graph
