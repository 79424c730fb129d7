// ONNX TensorProto <-> HostTensor: initializers, Constant attributes and the .pb files of
// ONNX test data sets. Every size is checked before anything is allocated or copied.
#pragma once

#include <string>

#include "ops/host_tensor.h"

namespace onnx {
class TensorProto;
}

namespace tuner::graph {

/// Converts a TensorProto. External data is read relative to `base_dir` and must stay inside
/// it (no absolute paths, no "..", no symlink leading out); an empty base_dir refuses external
/// data. Unsupported dtypes, overflowing shapes and data that disagrees with the shape are
/// UserErrors naming `what`.
ops::HostTensor tensor_from_proto(const onnx::TensorProto& t, const std::string& base_dir,
                                  const std::string& what);

/// The te dtype of a TensorProto data type code; a UserError naming `what` when unsupported.
te::DataType dtype_from_onnx(int code, const std::string& what);

/// Reads a serialized TensorProto file (input_0.pb, output_0.pb); its tensor name (empty when
/// it has none) goes to `name` when given.
ops::HostTensor load_tensor_file(const std::string& path, std::string* name = nullptr);

/// Writes `t` as a serialized TensorProto file named `name`.
void save_tensor_file(const ops::HostTensor& t, const std::string& name, const std::string& path);

}  // namespace tuner::graph
