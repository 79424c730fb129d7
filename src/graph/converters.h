// Converters: each supported ONNX operator as te computations (src/ops) over te tensors. One
// converter serves shape inference (on placeholders), constant folding (evaluated by the te
// interpreter) and task extraction (composed into fused ComputeDAGs), so an operator's
// semantics live in one place.
#pragma once

#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "graph/graph.h"
#include "te/tensor.h"

namespace tuner::graph {

/// The sizes of the data dimensions a Gather-like node's indices (input 1) select along:
/// element e of the indices must lie in [-L, L-1], L = limits[e % limits.size()]. For Gather,
/// GatherElements, ScatterElements (data's axis), GatherND (the k dimensions after batch_dims)
/// and ScatterND (the first k); empty for other nodes and malformed attributes (which the
/// converters refuse). One rule for the import's check of constant indices and the run-time
/// check of index inputs (compile/compile_model.cc).
std::vector<int64_t> index_limits(const Graph& g, const Node& n);

/// What a converter sees of its node.
class ConvertContext {
 public:
  ConvertContext(const Graph& g, const Node& n, std::vector<te::Tensor> inputs,
                 std::string prefix);

  const Node& node() const { return node_; }
  const Graph& graph() const { return graph_; }
  int64_t opset() const { return graph_.opset; }
  /// Number of inputs the node lists (absent optional ones included).
  size_t num_inputs() const { return node_.inputs.size(); }
  /// Whether optional input i is given.
  bool has_input(size_t i) const { return i < node_.inputs.size() && node_.inputs[i] >= 0; }
  /// Input i as a te tensor (a UserError naming the node when it is absent).
  const te::Tensor& input(size_t i) const;
  /// The graph value of input i.
  const Value& input_value(size_t i) const;
  /// Whether input i is a constant of no elements (folded shape arithmetic: Concat skips it).
  bool empty_constant(size_t i) const {
    return has_input(i) && input_value(i).is_constant() && input_value(i).num_elements() == 0;
  }
  /// The data of constant input i; a UserError naming the node when it is not constant.
  const ops::HostTensor& constant(size_t i, const char* what) const;
  /// Constant input i as integers (shape, axes, pads, ...).
  std::vector<int64_t> constant_ints(size_t i, const char* what) const;

  bool has_attr(const std::string& key) const { return node_.attrs.count(key) != 0; }
  int64_t attr_int(const std::string& key, int64_t def) const;
  double attr_float(const std::string& key, double def) const;
  std::string attr_string(const std::string& key, const std::string& def) const;
  std::vector<int64_t> attr_ints(const std::string& key, const std::vector<int64_t>& def) const;
  std::vector<double> attr_floats(const std::string& key, const std::vector<double>& def) const;
  std::vector<std::string> attr_strings(const std::string& key, const std::vector<std::string>& def) const;
  /// A required attribute; a UserError naming the node when missing.
  const Attr& attr(const std::string& key) const;

  /// A te op name unique to this node: "<prefix>" or "<prefix>_<suffix>".
  std::string name(const std::string& suffix = "") const;
  /// Fails with a UserError prefixed by the node's description.
  [[noreturn]] void fail(const std::string& message) const;

 private:
  const Graph& graph_;
  const Node& node_;
  std::vector<te::Tensor> inputs_;
  std::string prefix_;
};

/// A converter's output: a te tensor, or data computed directly (Shape, Constant, ...).
using ConvertOutput = std::variant<te::Tensor, ops::HostTensor>;
using ConvertFn = std::function<std::vector<ConvertOutput>(const ConvertContext&)>;

/// How an operator computes on float16 inputs.
enum class HalfInputs : uint8_t {
  kAsIs,       ///< in float16: element-wise, data movement, max and min
  kInFloat32,  ///< adds up many terms: in float32, each float output rounded to float16 once
  /// As kInFloat32, but outputs after the first stay float32 (LayerNormalization's
  /// mean and inverse deviation, by its stash_type).
  kInFloat32KeepStats,
};

/// A supported operator.
struct Converter {
  std::string op;
  ConvertFn fn;
  /// Inputs read only as constant data (shape, axes, pads) or for their shape (Shape): no te
  /// tensor is made for them and they never become kernel arguments.
  std::vector<int> constant_inputs;
  /// A float16 accumulator drops the low digits of every term (ONNX Runtime sums in float32:
  /// a 4096-term float16 dot product came out 9% low, a 4096-element mean 1% off).
  HalfInputs half = HalfInputs::kAsIs;
  /// The first default-domain opset that has the operator (later than Tuner's oldest, 11).
  int64_t since = 1;
};

/// The converter of ONNX operator `op`, or nullptr.
const Converter* find_converter(const std::string& op);
/// The supported operator types of `domain` ("": ONNX's default domain; "com.microsoft":
/// ONNX Runtime's operators of quantized models, registered as "com.microsoft.<type>"), sorted.
std::vector<std::string> supported_ops(const std::string& domain = "");

/// Converts node `n` of `g` given te tensors for its inputs (undefined for absent inputs and
/// for constant-only inputs). `prefix` names the te ops.
std::vector<ConvertOutput> convert_node(const Graph& g, const Node& n,
                                        const std::vector<te::Tensor>& inputs,
                                        const std::string& prefix);

}  // namespace tuner::graph
