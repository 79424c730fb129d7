// A tensor in host memory: contiguous, row-major, 64-byte aligned. Used to feed compiled
// kernels (codegen/runtime tests), the te interpreter and the naive references.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "support/error.h"
#include "support/rng.h"
#include "te/dtype.h"
#include "te/tensor.h"

namespace tuner::ops {

/// float32 -> IEEE half (round to nearest even), as its bit pattern.
uint16_t float_to_half(float f);
/// IEEE half bit pattern -> float32.
float half_to_float(uint16_t h);

/// The te dtype matching a C++ element type (float16 is stored as uint16_t bits).
template <class T>
constexpr bool dtype_matches(te::DataType t) {
  using D = te::DataType;
  if constexpr (std::is_same_v<T, float>) return t == D::f32();
  else if constexpr (std::is_same_v<T, uint16_t>) return t == D::f16();
  else if constexpr (std::is_same_v<T, int64_t>) return t == D::i64();
  else if constexpr (std::is_same_v<T, int32_t>) return t == D::i32();
  else if constexpr (std::is_same_v<T, int8_t>) return t == D::i8();
  else if constexpr (std::is_same_v<T, uint8_t>) return t == D::u8();
  else if constexpr (std::is_same_v<T, bool>) return t == D::boolean();
  else return false;
}

/// A dense host tensor. Copies are deep; moves are cheap. Scalars have shape {}; a shape
/// with a 0 holds no elements (constant data such as an empty axes list; te ops refuse it).
struct HostTensor {
  std::vector<int64_t> shape;
  te::DataType dtype = te::DataType::f32();

  HostTensor() = default;
  /// A zero-filled tensor; throws UserError for unsupported dtypes or bad shapes.
  HostTensor(std::vector<int64_t> shape, te::DataType dtype);
  HostTensor(const HostTensor& o);
  HostTensor& operator=(const HostTensor& o);
  HostTensor(HostTensor&&) noexcept = default;
  HostTensor& operator=(HostTensor&&) noexcept = default;

  /// Uniform random values in [lo, hi] (integers: whole numbers in range; bool: 0/1).
  static HostTensor random(std::vector<int64_t> shape, te::DataType dtype, Rng& rng,
                           double lo = -1.0, double hi = 1.0);
  /// A tensor holding the given values (converted to dtype), row-major.
  static HostTensor from_values(std::vector<int64_t> shape, te::DataType dtype,
                                const std::vector<double>& values);

  int64_t num_elements() const { return num_elements_; }
  /// Bytes of element storage (the buffer itself is padded to a multiple of 64).
  size_t bytes() const { return size_t(num_elements_) * size_t(dtype.bytes()); }
  bool defined() const { return data_ != nullptr; }

  /// Typed element pointer; T must match dtype (see dtype_matches).
  template <class T>
  T* data() {
    INTERNAL_CHECK(dtype_matches<T>(dtype)) << "HostTensor of " << dtype.str()
                                            << " accessed with the wrong C++ type";
    return reinterpret_cast<T*>(data_.get());
  }
  template <class T>
  const T* data() const {
    return const_cast<HostTensor*>(this)->data<T>();
  }
  void* raw() { return data_.get(); }
  const void* raw() const { return data_.get(); }

  /// Element at a flat index as double (any dtype).
  double get(int64_t flat) const;
  /// Stores v at a flat index, converted to dtype (float -> int truncates toward zero).
  void set(int64_t flat, double v);
  /// Element as int64 (integers and bool exact; floats truncated).
  int64_t get_int(int64_t flat) const;
  /// Stores an integer, wrapping to the dtype's width like a C++ conversion.
  void set_int(int64_t flat, int64_t v);

  /// Row-major strides in elements.
  std::vector<int64_t> strides() const;
  /// "float32[2x3]" plus the first few values, for messages.
  std::string str(int max_values = 8) const;

 private:
  struct Free {
    size_t bytes;  // counted in the bytes all host tensors hold (value-initialized: 0)
    void operator()(std::byte* p) const;
  };
  std::unique_ptr<std::byte[], Free> data_;
  int64_t num_elements_ = 0;
};

/// Throws UserError naming the sizes when `tensors` together cannot fit in this machine's
/// memory: for refusing a job before it is queued rather than when its inputs are made.
void check_fits_in_memory(const std::vector<te::Tensor>& tensors, const std::string& what);

/// Result of comparing a tensor with an expected one.
struct CompareResult {
  bool ok = true;
  int64_t mismatches = 0;
  /// Over the finite pairs; infinite when a NaN or infinity is where it should not be.
  double max_abs_error = 0;
  /// Empty when ok; otherwise the first mismatch and a count.
  std::string message;
};

/// Whether every |actual - expected| <= atol + rtol * |expected| (false on NaN or infinity:
/// compare() decides those); sets the largest difference when true. Fast, no copies.
bool all_close(const float* actual, const float* expected, int64_t n, double rtol, double atol,
               double* max_abs_error = nullptr);

/// Element-wise |actual - expected| <= atol + rtol * |expected| (NaN equals NaN; integer and
/// bool tensors exactly; float16 with rtol and atol of at least 1e-2). Shapes and dtypes
/// must match.
CompareResult compare(const HostTensor& actual, const HostTensor& expected, double rtol = 1e-4,
                      double atol = 1e-5);

/// Calls f(index) for every multi-index of shape in row-major order.
template <class F>
void for_each_index(const std::vector<int64_t>& shape, F&& f) {
  std::vector<int64_t> idx(shape.size(), 0);
  for (auto d : shape)
    if (d <= 0) return;
  while (true) {
    f(const_cast<const std::vector<int64_t>&>(idx));
    int d = int(shape.size()) - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace tuner::ops
