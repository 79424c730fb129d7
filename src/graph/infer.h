// Shape inference and constant folding in one walk: each node is converted to te over
// placeholders of its inputs' shapes, which gives its outputs' shapes and dtypes; a node whose
// inputs are all constants is evaluated (te interpreter) and replaced by its results.
#pragma once

#include "graph/graph.h"
#include "te/tensor.h"

namespace tuner::graph {

/// Fills every value's shape and dtype and folds constant nodes (marking them dead).
/// Returns the number of nodes folded.
int infer_and_fold(Graph& g);

/// Placeholders for node n's inputs: undefined for absent inputs and for the converter's
/// constant-only inputs.
std::vector<te::Tensor> input_placeholders(const Graph& g, const Node& n);

}  // namespace tuner::graph
