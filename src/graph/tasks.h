// Task extraction: each fused group becomes a te::ComputeDAG over placeholders for its inputs;
// structurally equal groups are one task whose weight is how often it occurs.
#pragma once

#include <string>
#include <vector>

#include "graph/fusion.h"
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

}  // namespace tuner::graph
