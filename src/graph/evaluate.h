// A graph interpreter: runs every live node through its converter and the te interpreter
// (ops::evaluate_dag). Slow and obviously correct: the reference the converters, the graph
// passes and the compiled model are checked against.
#pragma once

#include <vector>

#include "graph/graph.h"
#include "ops/host_tensor.h"

namespace tuner::graph {

/// Runs `g` on `inputs` (in g.inputs order; shapes and dtypes must match) and returns the
/// model's outputs in g.outputs order.
std::vector<ops::HostTensor> evaluate_graph(const Graph& g,
                                            const std::vector<ops::HostTensor>& inputs);

}  // namespace tuner::graph
