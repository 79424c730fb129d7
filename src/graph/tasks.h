// Task extraction: each fused group becomes a te::ComputeDAG over placeholders for its inputs;
// structurally equal groups are one task whose weight is how often it occurs.
#pragma once

#include <string>
#include <vector>

#include "graph/fusion.h"
#include "ops/host_tensor.h"
#include "te/compute_dag.h"

namespace tuner::graph {

/// The DAG of one group: arguments are the group's inputs then its outputs, in order.
te::ComputeDAG group_dag(const Graph& g, const Group& grp);

/// A distinct workload of the model.
struct Task {
  te::ComputeDAG dag;
  int weight = 0;            // groups sharing this DAG
  std::string ops;           // member ops of the first such group ("Conv+Add+Relu")
  std::string first_node;    // name of that group's first node
};

/// The model cut into tasks.
struct TaskSet {
  std::vector<Group> groups;
  std::vector<Task> tasks;
  std::vector<int> task_of_group;  // index into tasks for every group
  std::vector<int> in_place_concats;  // Concat nodes no kernel runs (graph::in_place_concats)
};

/// Fuses `g` and extracts its tasks.
TaskSet extract_tasks(const Graph& g, const FuseOptions& opts = {});

/// Inputs to measure task `task` of `ts` with, in its DAG's input order: the model's own
/// values where the task's first group reads a constant (its weights), random ones from
/// `seed` elsewhere (floats in [-1, 1], integers 0 or 1).
std::vector<ops::HostTensor> task_inputs(const Graph& g, const TaskSet& ts, size_t task, uint64_t seed);

}  // namespace tuner::graph
