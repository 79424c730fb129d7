// The operator registry: every op by name, with documented parameters, a DAG builder, its
// reference and a generator of valid random inputs. Used by `tuner op list|run` and tests.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ops/host_tensor.h"
#include "te/compute_dag.h"

namespace tuner::ops {

/// Op parameters as strings (key -> value) with typed, checked getters. A getter's parse error
/// is a UserError naming the parameter.
class Params {
 public:
  Params() = default;
  explicit Params(std::map<std::string, std::string> values) : values_(std::move(values)) {}

  bool has(const std::string& key) const { return values_.count(key) != 0; }
  /// The raw value; a missing key is a UserError.
  const std::string& get(const std::string& key) const;
  int64_t get_int(const std::string& key) const;
  double get_float(const std::string& key) const;
  /// "1"/"true" or "0"/"false".
  bool get_bool(const std::string& key) const;
  /// "1x64x56x56" -> {1, 64, 56, 56} ("scalar" -> {}).
  std::vector<int64_t> get_shape(const std::string& key) const;
  /// "0,2,-1" -> {0, 2, -1} ("none" -> {}).
  std::vector<int64_t> get_ints(const std::string& key) const;
  /// "2x3,2x5" -> {{2, 3}, {2, 5}}.
  std::vector<std::vector<int64_t>> get_shapes(const std::string& key) const;
  /// "float32", "int64", ...
  te::DataType get_dtype(const std::string& key) const;

  void set(const std::string& key, std::string value) { values_[key] = std::move(value); }
  const std::map<std::string, std::string>& values() const { return values_; }
  /// Canonical "k1=v1 k2=v2 ..." (keys sorted), for display and logs.
  std::string str() const;

 private:
  std::map<std::string, std::string> values_;
};

/// One parameter of an op; an empty default_value means the parameter is required.
struct OpParam {
  std::string name;
  std::string default_value;
  std::string help;
};

/// A registered operator.
struct OpDef {
  std::string name;
  std::string help;
  std::vector<OpParam> params;
  /// Builds the DAG (inputs in kernel-argument order, then outputs) from parsed params.
  std::function<te::ComputeDAG(const Params&)> build;
  /// Reference outputs for the given inputs (same order as dag.inputs() / dag.outputs()).
  std::function<std::vector<HostTensor>(const Params&, const std::vector<HostTensor>&)> reference;
  /// Random valid inputs (positive for log/sqrt, in-range gather indices, ...).
  std::function<std::vector<HostTensor>(const Params&, const te::ComputeDAG&, uint64_t seed)>
      make_inputs;
  /// Absolute tolerance of checks against the reference when the op's own algorithm rounds
  /// more than the checks' default allows (0: the default).
  double atol = 0;
};

/// Every registered op, sorted by name.
const std::vector<OpDef>& op_registry();
/// The op named `name`; an unknown name is a UserError listing the known ops.
const OpDef& find_op(const std::string& name);
/// Parses "key=value" strings against op's parameters: unknown or repeated keys and missing
/// required parameters are UserErrors; defaults are filled in.
Params parse_params(const OpDef& op, const std::vector<std::string>& key_eq_value);
/// "matmul m=<m> n=<n> k=<k> [batch=1] ...": a one-line usage string.
std::string op_usage(const OpDef& op);

/// Random inputs for every input of dag from one seed: floats uniform in [lo, hi], integers in
/// [int_lo, int_hi], bools 0/1 (the default make_inputs).
std::vector<HostTensor> random_inputs(const te::ComputeDAG& dag, uint64_t seed, double lo = -1.0,
                                      double hi = 1.0, int64_t int_lo = -10, int64_t int_hi = 10);

}  // namespace tuner::ops
