// Operator fusion: cuts the graph into groups, each compiled as one kernel. Injective
// operators join their producer's group (conv/matmul + bias + activation + residual add as
// one kernel), injective producers join the reduction that consumes them, and there is at
// most one heavy operator (conv, matmul, reduction) per group.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.h"

namespace tuner::graph {

/// How an operator fuses.
enum class FusePattern { Injective, Anchor, Reduction };

/// The pattern of an ONNX operator type.
FusePattern fuse_pattern(const std::string& op);

/// A fused group: live nodes in topological order and the values crossing its boundary.
struct Group {
  std::vector<int> nodes;
  std::vector<int> inputs;   // values read from outside (model inputs, other groups, weights)
  std::vector<int> outputs;  // values used after the group or model outputs
  FusePattern pattern = FusePattern::Injective;
  /// "Conv+Add+Relu" from the member ops, for listings.
  std::string ops(const Graph& g) const;
};

struct FuseOptions {
  /// Off: one group per node (for debugging and the unfused baseline).
  bool enabled = true;
  /// A group takes at most this many nodes: its ops are inlined into one expression, and the
  /// passes over expressions recurse once per level (a 20,000-node chain overflowed the stack).
  size_t max_nodes = 64;
  /// ... and at most this many reshapes (Reshape, Flatten, DepthToSpace, SpaceToDepth): each
  /// one's index is a division and remainder of the flattened index of the next, in every
  /// dimension, so an inlined chain of reshapes and transposes (which the simplifier cannot
  /// collapse) grows exponentially (a 100-node chain on 120 elements took 24 GB to compile).
  size_t max_reshapes = 4;
};

/// Whether concat node n's inputs could be written in place, into their part of the output
/// (which then needs no kernel): along an axis with only 1s before it, so each input is one
/// contiguous range, 64-byte aligned; every input produced by a node (not a model input,
/// output or constant, nor another concat's output, nor read twice), and the output not a
/// model output.
bool concat_fits_in_place(const Graph& g, const Node& n);
/// The concat nodes that fit in place, each input aliased by one concat only.
std::vector<int> in_place_concats(const Graph& g);

/// Groups of the live nodes but in_place_concats, in an order where every group's inputs are
/// computed earlier.
std::vector<Group> fuse(const Graph& g, const FuseOptions& opts = {});
/// The same, with in_place_concats(g) already at hand.
std::vector<Group> fuse(const Graph& g, const FuseOptions& opts, const std::vector<int>& in_place);

}  // namespace tuner::graph
