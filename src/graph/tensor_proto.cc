#include "graph/tensor_proto.h"

#include <onnx/onnx_pb.h>

#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ops/shape.h"
#include "support/error.h"
#include "support/read_file.h"

namespace tuner::graph {

namespace fs = std::filesystem;

te::DataType dtype_from_onnx(int code, const std::string& what) {
  switch (code) {
    case onnx::TensorProto::FLOAT: return te::DataType::f32();
    case onnx::TensorProto::FLOAT16: return te::DataType::f16();
    case onnx::TensorProto::INT64: return te::DataType::i64();
    case onnx::TensorProto::INT32: return te::DataType::i32();
    case onnx::TensorProto::INT8: return te::DataType::i8();
    case onnx::TensorProto::UINT8: return te::DataType::u8();
    case onnx::TensorProto::BOOL: return te::DataType::boolean();
    default: break;
  }
  std::string name = onnx::TensorProto::DataType_IsValid(code)
                         ? onnx::TensorProto::DataType_Name(onnx::TensorProto::DataType(code))
                         : "code " + std::to_string(code);
  USER_ERROR() << what << ": data type " << name
               << " is not supported (float32, float16, int64, int32, int8, uint8, bool are)";
}

namespace {

int onnx_code(te::DataType t) {
  if (t == te::DataType::f32()) return onnx::TensorProto::FLOAT;
  if (t == te::DataType::f16()) return onnx::TensorProto::FLOAT16;
  if (t == te::DataType::i64()) return onnx::TensorProto::INT64;
  if (t == te::DataType::i32()) return onnx::TensorProto::INT32;
  if (t == te::DataType::i8()) return onnx::TensorProto::INT8;
  if (t == te::DataType::u8()) return onnx::TensorProto::UINT8;
  if (t == te::DataType::boolean()) return onnx::TensorProto::BOOL;
  INTERNAL_CHECK(false) << "no ONNX type for " << t.str();
}

// Reads the external data of `t` from inside base_dir.
std::string read_external(const onnx::TensorProto& t, const std::string& base_dir,
                          const std::string& what) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : t.external_data()) {
    auto number = [&](const std::string& v) {
      try {
        size_t used = 0;
        long long n = std::stoll(v, &used);
        USER_CHECK(used == v.size() && n >= 0) << what << ": bad external data " << kv.key();
        return int64_t(n);
      } catch (const std::logic_error&) {
        USER_ERROR() << what << ": bad external data " << kv.key() << " '" << v << "'";
      }
    };
    if (kv.key() == "location") location = kv.value();
    else if (kv.key() == "offset") offset = number(kv.value());
    else if (kv.key() == "length") length = number(kv.value());
  }
  USER_CHECK(!base_dir.empty()) << what << ": external data is not allowed here";
  USER_CHECK(!location.empty()) << what << ": external data without a location";
  fs::path rel(location);
  USER_CHECK(!rel.is_absolute()) << what << ": external data path '" << location
                                 << "' is absolute; it must be inside the model's folder";
  for (const auto& part : rel)
    USER_CHECK(part != "..") << what << ": external data path '" << location
                             << "' leaves the model's folder";
  std::error_code ec;
  fs::path base = fs::canonical(base_dir, ec);
  USER_CHECK(!ec) << what << ": cannot resolve the model folder " << base_dir;
  fs::path file = fs::canonical(base / rel, ec);
  USER_CHECK(!ec) << what << ": external data file '" << location << "' not found";
  std::string b = base.string() + "/", f = file.string();
  USER_CHECK(f.compare(0, b.size(), b) == 0)
      << what << ": external data path '" << location << "' resolves outside the model's folder";
  USER_CHECK(fs::is_regular_file(file)) << what << ": external data '" << location
                                        << "' is not a regular file";
  int64_t size = int64_t(fs::file_size(file));
  if (length < 0) length = size - offset;
  USER_CHECK(offset <= size && length >= 0 && length <= size - offset)
      << what << ": external data range [" << offset << ", +" << length << ") is outside '"
      << location << "' (" << size << " bytes)";
  std::ifstream in(file, std::ios::binary);
  std::string data(size_t(length), '\0');
  in.seekg(offset);
  in.read(data.data(), length);
  USER_CHECK(in.good() || length == 0) << what << ": cannot read external data " << location;
  return data;
}

template <class Src>
void copy_numbers(ops::HostTensor& out, const Src& values, const std::string& what,
                  const char* field) {
  USER_CHECK(int64_t(values.size()) == out.num_elements())
      << what << ": " << field << " holds " << values.size() << " values, the shape "
      << te::shape_str(out.shape) << " needs " << out.num_elements();
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    if (out.dtype.is_float()) out.set(i, double(values[int(i)]));
    else out.set_int(i, int64_t(values[int(i)]));
  }
}

}  // namespace

ops::HostTensor tensor_from_proto(const onnx::TensorProto& t, const std::string& base_dir,
                                  const std::string& what) {
  USER_CHECK(!t.has_segment())
      << what << ": segmented tensors are not supported";
  te::DataType dtype = dtype_from_onnx(t.data_type(), what);
  ops::Shape shape;
  int64_t n = 1;
  for (int64_t d : t.dims()) {
    USER_CHECK(d >= 0) << what << ": negative dimension " << d;
    USER_CHECK(!__builtin_mul_overflow(n, d, &n) && n <= (int64_t(1) << 40))
        << what << ": shape is too large (element count overflows)";
    shape.push_back(d);
  }
  USER_CHECK(n * dtype.bytes() <= (int64_t(1) << 34))
      << what << ": tensor of " << n << " elements is larger than 16 GiB";
  // ONNX's checker allows one value field: which one a reader takes would be a guess.
  int fields = (t.has_raw_data() || t.data_location() == onnx::TensorProto::EXTERNAL) +
               (t.float_data_size() > 0) + (t.int32_data_size() > 0) + (t.int64_data_size() > 0) +
               (t.double_data_size() > 0) + (t.uint64_data_size() > 0) + (t.string_data_size() > 0);
  USER_CHECK(fields <= 1) << what << ": holds its values in " << fields
                          << " fields (raw_data, float_data, ...): a tensor has one";
  const std::string* raw = nullptr;
  std::string external;
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    external = read_external(t, base_dir, what);
    raw = &external;
  } else if (t.has_raw_data()) {
    raw = &t.raw_data();
  }
  ops::HostTensor out(shape, dtype);
  if (raw) {
    USER_CHECK(int64_t(raw->size()) == n * dtype.bytes())
        << what << ": holds " << raw->size() << " bytes of data, the shape " << te::shape_str(shape)
        << " of " << dtype.str() << " needs " << n * dtype.bytes();
    if (n) std::memcpy(out.raw(), raw->data(), raw->size());
    return out;
  }
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT: copy_numbers(out, t.float_data(), what, "float_data"); break;
    case onnx::TensorProto::INT64: copy_numbers(out, t.int64_data(), what, "int64_data"); break;
    case onnx::TensorProto::FLOAT16: {
      // Half values travel as their bit patterns in int32_data.
      USER_CHECK(int64_t(t.int32_data_size()) == n)
          << what << ": int32_data holds " << t.int32_data_size() << " values, needs " << n;
      for (int64_t i = 0; i < n; ++i) out.data<uint16_t>()[i] = uint16_t(t.int32_data(int(i)));
      break;
    }
    default: copy_numbers(out, t.int32_data(), what, "int32_data"); break;
  }
  return out;
}

ops::HostTensor load_tensor_file(const std::string& path, std::string* name) {
  std::string bytes = read_file_bytes(path, (size_t(1) << 31) - 1);
  onnx::TensorProto t;
  USER_CHECK(t.ParseFromString(bytes)) << path << ": not a serialized ONNX TensorProto";
  // An empty file parses as a TensorProto with no fields.
  USER_CHECK(t.has_data_type()) << path << ": not a serialized ONNX TensorProto (no data type"
                                << (bytes.empty() ? "; the file is empty)" : ")");
  if (name) *name = t.name();
  return tensor_from_proto(t, "", path);
}

void save_tensor_file(const ops::HostTensor& t, const std::string& name, const std::string& path) {
  onnx::TensorProto p;
  p.set_name(name);
  p.set_data_type(onnx_code(t.dtype));
  for (int64_t d : t.shape) p.add_dims(d);
  p.set_raw_data(std::string(static_cast<const char*>(t.raw()), t.bytes()));
  std::ofstream out(path, std::ios::binary);
  USER_CHECK(out && p.SerializeToOstream(&out)) << path << ": cannot write";
}

}  // namespace tuner::graph
