// A workload as the database stores it: the identity of a te::ComputeDAG (structural hash and
// canonical text) plus what people need to read it (op name, parameters, shapes, FLOPs). The
// database never needs the DAG itself, and knows nothing of schedules or search.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "support/json.h"

namespace tuner::te {
class ComputeDAG;
}

namespace tuner::db {

struct Workload {
  int64_t id = 0;               // assigned by the database (0 before commit)
  std::string hash;             // te::ComputeDAG::hash_hex(): 16 lower-case hex digits
  std::string op;               // operator or fused-group name: "matmul", "conv2d_bias_relu", ...
  std::string params;           // human-readable parameters: "M=512 N=512 K=512"
  Json shapes = Json::array();  // [{"name","shape":[..],"dtype"}] in kernel-argument order
  double flops = 0;             // floating-point operations of one evaluation
  std::string canonical;        // te::ComputeDAG::canonical_text()
  int64_t created_ms = 0;       // set by the database on first commit

  /// The workload of a DAG (hash, canonical text, shapes and FLOPs taken from it).
  static Workload from_dag(const te::ComputeDAG& dag, std::string op, std::string params);
};

/// The structural hash of a canonical DAG text as 16 hex digits: what te::ComputeDAG::hash_hex()
/// gives for a DAG with that canonical text (checked by a unit test). Used to verify workloads.
std::string workload_hash_of(std::string_view canonical);

/// Throws a UserError unless `w` is well-formed: a 16-hex-digit hash that matches the
/// canonical text, a non-empty op, an array of shapes, finite non-negative FLOPs.
void check_workload(const Workload& w);

/// A whole model's task is stored under op "model:<member ops>" ("model:Conv+Add+Relu") with
/// parameters "model=<graph name> task=<index>": its DAG can be rebuilt only from its model.
std::string model_task_op(std::string_view member_ops);
/// The parameters of task `index` of the model named `model`.
std::string model_task_params(std::string_view model, size_t index);
/// The member ops of a model task's op name ("model:Conv+Relu" -> "Conv+Relu"), or nullopt
/// for an operator's workload.
std::optional<std::string_view> model_task_members(std::string_view op);

/// A target, identified by its canonical target string
/// ("llvm -mtriple=x86_64-pc-linux-gnu -mcpu=znver5", "cuda -arch=sm_90").
struct Target {
  int64_t id = 0;                  // assigned by the database
  std::string name;                // the canonical target string
  Json hardware = Json::object();  // hardware parameters: cores, vector bits, caches, ...
};

}  // namespace tuner::db
