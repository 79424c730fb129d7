// The ONNX frontend: a model file -> graph::Graph with static shapes, every value's shape and
// dtype inferred and constant subgraphs folded (infer.h).
#pragma once

#include <map>
#include <string>

#include "graph/graph.h"

namespace tuner::graph {

/// The default-domain opsets import_onnx reads.
inline constexpr int64_t kMinOpset = 11, kMaxOpset = 25;

struct ImportOptions {
  /// Fixed shapes for inputs with dynamic dimensions ("--input-shape name:1x3x224x224").
  std::map<std::string, ops::Shape> input_shapes;
  /// Whether initializers may keep their data in files beside the model. Off for models
  /// submitted to a server: the files beside them there are the server's own.
  bool external_data = true;
};

/// Loads, checks (onnx::checker) and imports the model at `path`. Bad files, unsupported
/// operators (all of them listed at once), opsets outside 11..17 and dynamic shapes without
/// an override are UserErrors naming the problem.
Graph import_onnx(const std::string& path, const ImportOptions& opts = {});

/// Parses "name:1x3x224x224" into opts.input_shapes (a UserError when malformed).
void parse_input_shape(const std::string& spec, ImportOptions& opts);

}  // namespace tuner::graph
