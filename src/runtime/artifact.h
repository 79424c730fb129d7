// The compiled-model artifact: one file holding the execution plan (JSON), the kernels'
// shared object and the weights. Layout: "TUNERMDL", u32 version, then three length-prefixed
// (u64) sections: plan JSON, shared object, weights; from version 2 a u64 checksum of the three
// (checksum64, chained) ends the file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "support/json.h"

namespace tuner::runtime {

/// Where a buffer lives at run time.
enum class Storage { Input, Output, Weight, Arena };

struct BufferDesc {
  std::string name;
  std::vector<int64_t> shape;
  std::string dtype;  // "float32", "int64", ...
  int64_t bytes = 0;
  Storage storage = Storage::Arena;
  int64_t offset = 0;  // in the weights section or the arena; for inputs/outputs: their index
};

/// One step of the plan: a kernel call on buffers (inputs then outputs), or a copy
/// (kernel == "@copy", args = {src, dst}).
struct Step {
  std::string kernel;
  std::vector<int> args;
  std::string label;  // the fused operators, for profiles
  int task = -1;
};

/// A run-time check of an index input: element e must lie in [-L, L-1] with
/// L = limits[e % limits.size()] (one limit for Gather-like operators, one per index component
/// for GatherND/ScatterND). ONNX calls other indices errors; the kernels would clamp them.
struct IndexCheck {
  int input = 0;                // position in Plan::inputs
  std::vector<int64_t> limits;  // sizes of the dimensions indexed
  std::string op;               // "Gather 'embeddings'", for messages
};

struct Plan {
  std::string model;
  std::string target;
  /// Instruction-set features the kernels need (LLVM names the runtime can check on the host).
  std::vector<std::string> cpu_features;
  std::vector<BufferDesc> buffers;
  std::vector<Step> steps;
  std::vector<int> inputs, outputs;  // buffer ids
  std::vector<IndexCheck> index_checks;
  int64_t arena_bytes = 0;
  /// Sum of all intermediate buffers' sizes (what the arena saves against).
  int64_t unplanned_bytes = 0;

  Json to_json() const;
  /// A UserError when the JSON is not a valid plan.
  static Plan from_json(const Json& j);
};

struct Artifact {
  Plan plan;
  std::string shared_object;
  std::string weights;

  /// Writes the artifact file (atomically: a temporary file renamed into place).
  void save(const std::string& path) const;
  /// Reads an artifact; a UserError names what is wrong with a bad or truncated file.
  static Artifact load(const std::string& path);
};

/// Bytes per element of a dtype name.
int dtype_bytes(const std::string& dtype);

}  // namespace tuner::runtime
