// The graph IR of a whole model: values (tensors with static shapes, constant data when
// known) and nodes (an ONNX operator type with its attributes). The frontend builds it, the
// graph passes rewrite it, fusion cuts it into groups and task extraction turns each group
// into a te::ComputeDAG through the converters (converters.h).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ops/host_tensor.h"
#include "ops/shape.h"
#include "te/dtype.h"

namespace tuner::graph {

/// One node attribute (the ONNX attribute kinds Tuner's operators use).
struct Attr {
  enum Kind { Int, Float, String, Ints, Floats, Tensor, Strings } kind = Int;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<std::string> strings;
  std::shared_ptr<const ops::HostTensor> tensor;
};

/// The inputs of a DequantizeLinear of constants, folded at import: QDQ models' weights,
/// which qdq_to_qlinear gives their integer operators.
struct Dequantized {
  std::shared_ptr<const ops::HostTensor> q, scale, zero_point;  // zero_point may be null
  int64_t axis = 1;
};

/// A tensor of the graph. Constant data is shared: passes copy values cheaply.
struct Value {
  std::string name;
  ops::Shape shape;
  te::DataType dtype = te::DataType::f32();
  std::shared_ptr<const ops::HostTensor> data;  // set for constants (initializers, folded)
  int producer = -1;                              // node index, -1 for inputs and constants
  std::shared_ptr<const Dequantized> dequantized;  // set for a folded DequantizeLinear's output

  bool is_constant() const { return data != nullptr; }
  int64_t num_elements() const;
  /// Whether this and o are one-element constants of one type and value (equal scales, zero
  /// points).
  bool same_scalar_constant(const Value& o) const;
};

/// One operator application. Inputs and outputs are value ids; -1 marks an absent optional
/// input.
struct Node {
  std::string op;    // ONNX operator type ("Conv", "Relu", ...)
  std::string name;  // the model's node name, or "<op>_<index>" when it has none
  std::vector<int> inputs, outputs;
  std::map<std::string, Attr> attrs;
  bool dead = false;  // removed by a pass (kept so node ids stay stable until compact())
};

/// A model graph. Node order is topological.
class Graph {
 public:
  std::vector<Value> values;
  std::vector<Node> nodes;
  std::vector<int> inputs, outputs;  // value ids of the model's inputs and outputs
  int64_t opset = 0;                 // of the default ONNX domain
  std::string name;

  /// Adds a value and returns its id.
  int add_value(Value v);
  /// Adds a constant value holding `t`.
  int add_constant(std::string name, ops::HostTensor t);
  /// Appends a node (its outputs' producer fields are set) and returns its index.
  int add_node(Node n);
  /// Replaces node i by `fresh` (in order, at i) and renumbers every producer: a pass that
  /// rewrites one node into several keeps the order topological.
  void replace_node(size_t i, std::vector<Node> fresh);

  /// Live nodes reading value v.
  std::vector<int> consumers(int v) const;
  /// How many live nodes read v, plus one if v is a model output.
  int use_count(int v) const;
  bool is_output(int v) const;
  /// Replaces every use of value `from` (node inputs and model outputs) with `to`.
  void replace_uses(int from, int to);
  /// Drops dead nodes and unreferenced values, renumbering ids; node order is kept.
  void compact();
  /// Number of live nodes.
  size_t num_nodes() const;
  /// A readable listing: one line per node with its input and output shapes.
  std::string str() const;
};

/// An integer-list attribute.
Attr ints_attr(std::vector<int64_t> v);

/// "Conv 'conv1'" for messages.
std::string describe(const Node& n);

}  // namespace tuner::graph
