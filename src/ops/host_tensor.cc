#include "ops/host_tensor.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include <unistd.h>

#include "te/tensor.h"

namespace tuner::ops {

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) return uint16_t(sign | 0x7c00u | (mant ? 0x200u : 0u));  // inf / nan
  int e = int(exp) - 127 + 15;
  if (e >= 31) return uint16_t(sign | 0x7c00u);  // overflow: inf
  if (e <= 0) {                                  // half subnormal (or zero)
    if (e < -10) return uint16_t(sign);
    mant |= 0x800000u;
    int shift = 14 - e;
    uint32_t h = mant >> shift, rem = mant & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (h & 1u))) ++h;
    return uint16_t(sign | h);
  }
  uint32_t h = sign | (uint32_t(e) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  // Round to nearest even; a carry into the exponent is still the right answer.
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return uint16_t(h);
}

float half_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  uint32_t x;
  if (exp == 0) {
    float v = std::ldexp(float(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) x = sign | 0x7f800000u | (mant << 13);
  else x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

namespace {

bool supported(te::DataType t) {
  using D = te::DataType;
  for (D s : {D::f32(), D::f16(), D::i64(), D::i32(), D::i8(), D::u8(), D::boolean()})
    if (t == s) return true;
  return false;
}

// Bytes of physical memory (0 when unknown): larger tensors are refused before allocating, so
// the error does not depend on the allocator (ASan aborts on huge requests instead of failing).
std::atomic<size_t> g_host_bytes{0};  // held by every live host tensor (padded)

size_t physical_memory_bytes() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? size_t(pages) * size_t(page) : 0;
}

// Float -> int64 truncating toward zero, saturating (NaN -> 0) instead of undefined behaviour.
int64_t to_int64(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
  if (v <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
  return int64_t(v);
}

}  // namespace

void HostTensor::Free::operator()(std::byte* p) const {
  g_host_bytes -= bytes;
  std::free(p);
}

HostTensor::HostTensor(std::vector<int64_t> shape_, te::DataType dtype_)
    : shape(std::move(shape_)), dtype(dtype_) {
  USER_CHECK(supported(dtype)) << "host tensors of dtype " << dtype.str() << " are not supported";
  num_elements_ = 1;
  for (auto d : shape) {
    USER_CHECK(d >= 0 && (d == 0 || num_elements_ <= (int64_t(1) << 40) / d))
        << "bad host tensor shape " << te::shape_str(shape);
    num_elements_ *= d;
  }
  size_t padded = std::max<size_t>(64, (bytes() + 63) / 64 * 64);
  static const size_t memory = physical_memory_bytes();
  // All tensors together: an op's inputs, outputs and reference copies each fitting alone
  // could still exhaust memory, and the OOM killer gives no message.
  size_t held = g_host_bytes.load();
  if (memory == 0 || (padded <= memory && held <= memory - padded)) {
    data_ = std::unique_ptr<std::byte[], Free>(
        static_cast<std::byte*>(std::aligned_alloc(64, padded)), Free{padded});
    if (data_) g_host_bytes += padded;
  }
  USER_CHECK(data_) << "a " << dtype.str() << " tensor of shape " << te::shape_str(shape) << " ("
                    << fmt::format("{:.3g}", double(padded) / 1e9)
                    << " GB) is too large for this machine's memory"
                    << (held ? fmt::format(" ({:.3g} GB held by other tensors)", double(held) / 1e9)
                             : "");
  std::memset(data_.get(), 0, padded);
}

void check_fits_in_memory(const std::vector<te::Tensor>& tensors, const std::string& what) {
  static const size_t memory = physical_memory_bytes();
  if (memory == 0) return;
  double total = 0;  // in double: shapes of a mistyped size overflow int64
  for (const auto& t : tensors) {
    double n = t->dtype.bytes();
    for (auto d : t->shape) n *= double(d);
    total += n;
  }
  USER_CHECK(total <= double(memory))
      << what << " need " << fmt::format("{:.1f}", total / 1e9) << " GB together, more than "
      << "this machine's memory (" << fmt::format("{:.1f}", double(memory) / 1e9) << " GB)";
}

HostTensor::HostTensor(const HostTensor& o) : shape(o.shape), dtype(o.dtype) {
  if (!o.defined()) return;
  *this = HostTensor(o.shape, o.dtype);
  std::memcpy(data_.get(), o.data_.get(), bytes());
}

HostTensor& HostTensor::operator=(const HostTensor& o) {
  if (this != &o) *this = HostTensor(o);
  return *this;
}

HostTensor HostTensor::random(std::vector<int64_t> shape, te::DataType dtype, Rng& rng,
                              double lo, double hi) {
  HostTensor t(std::move(shape), dtype);
  INTERNAL_CHECK(lo <= hi) << "random range [" << lo << ", " << hi << "]";
  if (dtype.is_float()) {
    for (int64_t i = 0; i < t.num_elements(); ++i) t.set(i, lo + (hi - lo) * rng.uniform());
  } else if (dtype.is_bool()) {
    for (int64_t i = 0; i < t.num_elements(); ++i) t.set_int(i, rng.uniform_int(0, 1));
  } else {
    int64_t a = int64_t(std::ceil(lo)), b = int64_t(std::floor(hi));
    INTERNAL_CHECK(a <= b) << "no integer in [" << lo << ", " << hi << "]";
    for (int64_t i = 0; i < t.num_elements(); ++i) t.set_int(i, rng.uniform_int(a, b));
  }
  return t;
}

HostTensor HostTensor::from_values(std::vector<int64_t> shape, te::DataType dtype,
                                   const std::vector<double>& values) {
  HostTensor t(std::move(shape), dtype);
  INTERNAL_CHECK(int64_t(values.size()) == t.num_elements())
      << values.size() << " values for a tensor of " << t.num_elements() << " elements";
  for (size_t i = 0; i < values.size(); ++i) t.set(int64_t(i), values[i]);
  return t;
}

double HostTensor::get(int64_t i) const {
  const std::byte* p = data_.get();
  switch (dtype.code) {
    case te::DataType::Float:
      if (dtype.bits == 16) return half_to_float(reinterpret_cast<const uint16_t*>(p)[i]);
      return reinterpret_cast<const float*>(p)[i];
    default: return double(get_int(i));
  }
}

void HostTensor::set(int64_t i, double v) {
  std::byte* p = data_.get();
  if (dtype.is_float()) {
    if (dtype.bits == 16) reinterpret_cast<uint16_t*>(p)[i] = float_to_half(float(v));
    else reinterpret_cast<float*>(p)[i] = float(v);
  } else if (dtype.is_bool()) {
    set_int(i, v != 0 ? 1 : 0);
  } else {
    set_int(i, to_int64(v));
  }
}

int64_t HostTensor::get_int(int64_t i) const {
  const std::byte* p = data_.get();
  switch (dtype.code) {
    case te::DataType::Float: return to_int64(get(i));
    case te::DataType::Bool: return reinterpret_cast<const uint8_t*>(p)[i] ? 1 : 0;
    case te::DataType::UInt: return reinterpret_cast<const uint8_t*>(p)[i];
    case te::DataType::Int:
      if (dtype.bits == 8) return reinterpret_cast<const int8_t*>(p)[i];
      if (dtype.bits == 32) return reinterpret_cast<const int32_t*>(p)[i];
      return reinterpret_cast<const int64_t*>(p)[i];
    default: break;
  }
  INTERNAL_CHECK(false) << "get_int on " << dtype.str();
}

void HostTensor::set_int(int64_t i, int64_t v) {
  std::byte* p = data_.get();
  switch (dtype.code) {
    case te::DataType::Float: set(i, double(v)); return;
    case te::DataType::Bool: reinterpret_cast<uint8_t*>(p)[i] = v != 0; return;
    case te::DataType::UInt: reinterpret_cast<uint8_t*>(p)[i] = uint8_t(v); return;
    case te::DataType::Int:
      if (dtype.bits == 8) reinterpret_cast<int8_t*>(p)[i] = int8_t(v);
      else if (dtype.bits == 32) reinterpret_cast<int32_t*>(p)[i] = int32_t(v);
      else reinterpret_cast<int64_t*>(p)[i] = v;
      return;
    default: break;
  }
  INTERNAL_CHECK(false) << "set_int on " << dtype.str();
}

std::vector<int64_t> HostTensor::strides() const {
  std::vector<int64_t> s(shape.size(), 1);
  for (int d = int(shape.size()) - 2; d >= 0; --d) s[d] = s[d + 1] * shape[d + 1];
  return s;
}

std::string HostTensor::str(int max_values) const {
  std::string s = dtype.str() + "[" + te::shape_str(shape) + "] {";
  for (int64_t i = 0; i < num_elements_ && i < max_values; ++i)
    s += (i ? ", " : "") + fmt::format("{}", get(i));
  if (num_elements_ > max_values) s += ", ...";
  return s + "}";
}

bool all_close(const float* actual, const float* expected, int64_t n, double rtol, double atol,
               double* max_abs_error) {
  double max_err = 0;
  bool all_same = true;
  for (int64_t i = 0; i < n; ++i) {
    double d = std::fabs(double(actual[i]) - double(expected[i]));
    double tol = atol + rtol * std::fabs(double(expected[i]));
    all_same &= d <= tol && tol != HUGE_VAL;  // false on NaN and on an infinite expected value
    max_err = std::max(max_err, d);
  }
  if (all_same && max_abs_error) *max_abs_error = max_err;
  return all_same;
}

CompareResult compare(const HostTensor& actual, const HostTensor& expected, double rtol,
                      double atol) {
  CompareResult r;
  if (actual.shape != expected.shape || actual.dtype != expected.dtype) {
    r.ok = false;
    r.message = fmt::format("expected {}[{}], got {}[{}]", expected.dtype.str(),
                            te::shape_str(expected.shape), actual.dtype.str(),
                            te::shape_str(actual.shape));
    return r;
  }
  bool exact = !expected.dtype.is_float();
  if (expected.dtype == te::DataType::f16()) {
    // Half keeps ~3 significant digits and an operator's kernel accumulates in it (a model's
    // sums compute in float32): a few dozen terms are already off by several ulps, so
    // tighter tolerances reject right answers.
    rtol = std::max(rtol, 1e-2);
    atol = std::max(atol, 1e-2);
  }
  // The common case, checked for every measured candidate: a tight loop first, and the
  // element-wise walk below only to describe a mismatch.
  if (expected.dtype == te::DataType::f32() &&
      all_close(actual.data<float>(), expected.data<float>(), expected.num_elements(), rtol,
                atol, &r.max_abs_error))
    return r;
  std::vector<int64_t> strides = expected.strides();
  auto index_str = [&](int64_t i) {
    std::string idx;
    for (size_t d = 0; d < strides.size(); ++d)
      idx += (d ? "," : "") + std::to_string(i / strides[d] % expected.shape[d]);
    return idx;
  };
  for (int64_t i = 0; i < expected.num_elements(); ++i) {
    double a = actual.get(i), e = expected.get(i);
    bool same;
    if (exact) {
      // In integers: above 2^53, doubles would show different values as equal.
      int64_t ai = actual.get_int(i), ei = expected.get_int(i);
      uint64_t diff = ai > ei ? uint64_t(ai) - uint64_t(ei) : uint64_t(ei) - uint64_t(ai);
      r.max_abs_error = std::max(r.max_abs_error, double(diff));
      if (ai == ei) continue;
      if (r.mismatches++ == 0)
        r.message = fmt::format("at [{}]: got {}, expected {}", index_str(i), ai, ei);
      continue;
    }
    if (std::isnan(a) || std::isnan(e))
      same = std::isnan(a) && std::isnan(e);
    else if (std::isinf(a) || std::isinf(e)) same = a == e;
    else same = std::fabs(a - e) <= atol + rtol * std::fabs(e);
    if (std::isfinite(a) && std::isfinite(e))
      r.max_abs_error = std::max(r.max_abs_error, std::fabs(a - e));
    else if (!same)  // NaN against a number, or an infinity against anything else
      r.max_abs_error = std::numeric_limits<double>::infinity();
    if (same) continue;
    // fmt writes a NaN with its sign bit as "-nan".
    auto num = [](double v) { return std::isnan(v) ? std::string("nan") : fmt::format("{}", v); };
    if (r.mismatches++ == 0)
      r.message = fmt::format("at [{}]: got {}, expected {}", index_str(i), num(a), num(e));
  }
  if (r.mismatches) {
    r.ok = false;
    r.message += fmt::format(" ({} of {} elements differ, rtol={}, atol={})", r.mismatches,
                             expected.num_elements(), rtol, atol);
  }
  return r;
}

}  // namespace tuner::ops
