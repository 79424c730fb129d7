// Graph passes, run in order by run_passes(): each is one function over the graph that
// returns how many nodes it changed.
#pragma once

#include <functional>
#include <string>

#include "graph/graph.h"

namespace tuner::graph {

/// Identity and Dropout (inference) nodes: their readers read the input directly.
int remove_identities(Graph& g);
/// Nodes none of whose outputs is used (transitively).
int eliminate_dead_code(Graph& g);
/// Nodes equal to an earlier node (same op, attributes and inputs) are replaced by it.
int eliminate_common_subexpressions(Graph& g);
/// BatchNormalization after a Conv or Gemm with constant weights folds into them.
int fold_batch_norm(Graph& g);

struct PassOptions {
  /// Called with (pass name, graph) after every pass that changed the graph, and once with
  /// ("import", graph) before the first.
  std::function<void(const std::string&, const Graph&)> on_change;
};

/// The whole pipeline in order; the graph ends compacted.
void run_passes(Graph& g, const PassOptions& opts = {});

}  // namespace tuner::graph
