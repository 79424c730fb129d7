// Helpers the layout passes share (passes.cc, passes_integer.cc); not an API.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "graph/graph.h"

namespace tuner::graph::detail {

/// True when the node's ints attribute `key` is absent or all ones (strides, dilations).
bool all_ones(const Node& n, const char* key);
/// The pads of a Conv node as top, left, bottom, right, when it has explicit ones (or none).
std::optional<std::array<int64_t, 4>> explicit_pads(const Node& n);
/// A new computed value named after value `like` plus `suffix`, of like's dtype and `shape`.
int add_value_like(Graph& g, int like, const std::string& suffix, ops::Shape shape);
/// Integer weights w minus their zero point (absent, a scalar, or one per index of `axis`),
/// in int32: what an integer product multiplies.
ops::HostTensor centre_on_zero_point(const Value& w, const Value* zp, size_t axis);
/// The zero point input `zi` of n if it is absent or constant (`ok` false otherwise).
const Value* constant_zero_point(const Graph& g, const Node& n, size_t zi, bool& ok);
/// A tuner.ByteWords node of `reader`'s input 0 into `fresh`; returns its int32 output of `shape`.
int add_byte_words(Graph& g, const Node& reader, ops::Shape shape, std::map<std::string, Attr> attrs,
                   std::vector<Node>& fresh);
/// Replaces node i by `fresh` (the node itself last, its outputs unchanged); returns how many
/// nodes came before it.
size_t replace_node_by(Graph& g, size_t i, std::vector<Node> fresh);
/// The input pack_matmul_weights gives a byte-dot MatMulInteger, QLinearMatMul or QGemm
/// (com.microsoft) for B's column sums (past the operator's own inputs).
size_t matmul_column_sums_input(const std::string& op);
/// True when every value of t is an int8.
bool fits_int8(const ops::HostTensor& t);
/// Input i of n set to v, absent inputs before it added.
void set_input(Node& n, size_t i, int v);

}  // namespace tuner::graph::detail
