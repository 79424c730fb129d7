// ModelBuilder: one-graph ONNX models written in C++ (protobuf) for the model tests, and
// helpers to read and check their outputs.
#pragma once

#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "graph/evaluate.h"
#include "graph/onnx_import.h"
#include "onnx/node_harness.h"
#include "support/error.h"

namespace tuner::onnx_tests {

namespace fs = std::filesystem;
using ops::HostTensor;

// Builds a one-graph model of the default domain at `opset`.
class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset) {
    m_.set_ir_version(8);
    m_.add_opset_import()->set_version(opset);
    m_.mutable_graph()->set_name("test");
  }

  void input(const std::string& name, const std::vector<int64_t>& shape, int type = kFloat) {
    value_info(m_.mutable_graph()->add_input(), name, type, shape);
  }
  void output(const std::string& name, const std::vector<int64_t>& shape, int type = kFloat) {
    value_info(m_.mutable_graph()->add_output(), name, type, shape);
  }
  void initializer(const std::string& name, const std::vector<int64_t>& shape,
                   const std::vector<int64_t>& values) {
    onnx::TensorProto* t = m_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : shape) t->add_dims(d);
    for (int64_t v : values) t->add_int64_data(v);
  }
  /// A float initializer; 1-D unless `shape` is given.
  void float_initializer(const std::string& name, const std::vector<float>& values,
                         const std::vector<int64_t>& shape = {}) {
    onnx::TensorProto* t = m_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    if (shape.empty()) t->add_dims(int64_t(values.size()));
    for (int64_t d : shape) t->add_dims(d);
    for (float v : values) t->add_float_data(v);
  }
  /// An initializer of an 8- to 32-bit integer type (uint8, int8, int32: int32_data).
  void int_initializer(const std::string& name, int type, const std::vector<int64_t>& shape,
                       const std::vector<int64_t>& values) {
    onnx::TensorProto* t = m_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    for (int64_t d : shape) t->add_dims(d);
    for (int64_t v : values) t->add_int32_data(int32_t(v));
  }
  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs) {
    onnx::NodeProto* n = m_.mutable_graph()->add_node();
    n->set_op_type(op);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }
  onnx::ModelProto& model() { return m_; }
  /// The UserError importing the model raises, or "(imported)" when there is none.
  std::string import_error() {
    try {
      import();
    } catch (const UserError& e) {
      return e.what();
    }
    return "(imported)";
  }
  /// Writes the model into a fresh temporary folder and imports it.
  graph::Graph import() {
    fs::path dir = fs::temp_directory_path() / ("tuner-graph-model-" + std::to_string(getpid()));
    fs::create_directories(dir);
    std::string path = (dir / "model.onnx").string();
    {
      std::ofstream out(path, std::ios::binary);
      m_.SerializeToOstream(&out);
    }
    struct Cleanup {
      fs::path dir;
      ~Cleanup() { fs::remove_all(dir); }
    } cleanup{dir};
    return graph::import_onnx(path);
  }

  static constexpr int kFloat = onnx::TensorProto::FLOAT;

 private:
  static void value_info(onnx::ValueInfoProto* vi, const std::string& name, int type,
                         const std::vector<int64_t>& shape) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    tt->mutable_shape();
    for (int64_t d : shape) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }

  onnx::ModelProto m_;
};

inline void set_ints(onnx::NodeProto& n, const std::string& key, const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(key);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

inline void set_int(onnx::NodeProto& n, const std::string& key, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(key);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

inline void set_float(onnx::NodeProto& n, const std::string& key, float v) {
  auto* a = n.add_attribute();
  a->set_name(key);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

inline void set_string(onnx::NodeProto& n, const std::string& key, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(key);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

inline HostTensor iota(const std::vector<int64_t>& shape) {
  HostTensor t(shape, te::DataType::f32());
  for (int64_t i = 0; i < t.num_elements(); ++i) t.set(i, double(i));
  return t;
}

inline std::vector<double> values(const HostTensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.num_elements(); ++i) v.push_back(t.get(i));
  return v;
}
inline HostTensor floats(const std::vector<int64_t>& shape, const std::vector<double>& v) {
  return HostTensor::from_values(shape, te::DataType::f32(), v);
}

// Each output of `g` on `in`, interpreted and compiled, against `want` (within 1e-5 relative).
inline void expect_outputs(const graph::Graph& g, const std::vector<HostTensor>& in,
                    const std::vector<std::vector<double>>& want) {
  for (const char* how : {"interpreted", "compiled"}) {
    std::vector<HostTensor> out =
        std::string(how) == "compiled" ? run_compiled(g, in) : graph::evaluate_graph(g, in);
    ASSERT_EQ(out.size(), want.size()) << how;
    for (size_t i = 0; i < want.size(); ++i) {
      std::vector<double> got = values(out[i]);
      ASSERT_EQ(got.size(), want[i].size()) << how << " output " << i;
      for (size_t k = 0; k < got.size(); ++k)
        EXPECT_NEAR(got[k], want[i][k], 1e-5 * std::max(1.0, std::abs(want[i][k])))
            << how << " output " << i << " element " << k;
    }
  }
}


// Every output of `g` on `in`, compiled, against the graph interpreter's (the target's
// layout passes apply only when compiled).
inline void expect_compiled_as_interpreted(const graph::Graph& g, const std::vector<HostTensor>& in) {
  std::vector<std::vector<double>> want;
  for (const HostTensor& t : graph::evaluate_graph(g, in)) want.push_back(values(t));
  expect_outputs(g, in, want);
}

}  // namespace tuner::onnx_tests
