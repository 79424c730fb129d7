#include "ops/layout.h"

#include <cstring>

#include "ops/shape.h"
#include "support/error.h"

namespace tuner::ops {

namespace {

// Copies element (k, rest) of [K, rest] to/from element (k / b, rest, k % b) of the packed
// tensor; `to_packed` chooses the direction.
void convert(const HostTensor& from, HostTensor& to, int64_t k_total, int64_t block,
             bool to_packed) {
  int64_t rest = from.num_elements() / k_total;
  size_t es = size_t(from.dtype.bytes());
  const char* src = static_cast<const char*>(from.raw());
  char* dst = static_cast<char*>(to.raw());
  for (int64_t k = 0; k < k_total; ++k)
    for (int64_t r = 0; r < rest; ++r) {
      int64_t plain = k * rest + r;
      int64_t packed = ((k / block) * rest + r) * block + k % block;
      int64_t s = to_packed ? plain : packed, d = to_packed ? packed : plain;
      std::memcpy(dst + size_t(d) * es, src + size_t(s) * es, es);
    }
}

}  // namespace

HostTensor pack_conv_weight(const HostTensor& kcrs, int64_t block) {
  HostTensor out(packed_weight_shape(kcrs.shape, block), kcrs.dtype);
  convert(kcrs, out, kcrs.shape[0], block, true);
  return out;
}

HostTensor unpack_conv_weight(const HostTensor& packed) {
  HostTensor out(unpacked_weight_shape(packed.shape), packed.dtype);
  convert(packed, out, out.shape[0], packed.shape[4], false);
  return out;
}

HostTensor byte_words(const HostTensor& kcrs) {
  INTERNAL_CHECK(kcrs.shape.size() == 4) << "byte_words: a [K, C, KH, KW] weight";
  int64_t k = kcrs.shape[0], c = kcrs.shape[1], taps = kcrs.shape[2] * kcrs.shape[3], words = (c + 3) / 4;
  HostTensor out({k, words, kcrs.shape[2], kcrs.shape[3]}, te::DataType::i32());
  for (int64_t o = 0; o < k; ++o)
    for (int64_t w = 0; w < words; ++w)
      for (int64_t t = 0; t < taps; ++t) {
        uint32_t word = 0;
        for (int64_t j = 0; j < 4 && 4 * w + j < c; ++j) {
          int64_t v = kcrs.get_int((o * c + 4 * w + j) * taps + t);
          INTERNAL_CHECK(v >= -128 && v <= 127) << "byte_words: weight " << v << " is not a byte";
          word |= uint32_t(uint8_t(int8_t(v))) << (8 * j);
        }
        out.set_int((o * words + w) * taps + t, int32_t(word));
      }
  return out;
}

HostTensor pack_matmul_weight(const HostTensor& kn, int64_t block) {
  INTERNAL_CHECK(kn.shape.size() == 2 && block > 0 && kn.shape[1] % block == 0)
      << "pack_matmul_weight: a [k, n] matrix with n a multiple of the block";
  HostTensor nk = transpose_matrix(kn);
  HostTensor out({nk.shape[0] / block, nk.shape[1], block}, kn.dtype);
  convert(nk, out, nk.shape[0], block, true);
  return out;
}

HostTensor unpack_matmul_weight(const HostTensor& packed) {
  INTERNAL_CHECK(packed.shape.size() == 3) << "unpack_matmul_weight: a [n/b, k, b] tensor";
  HostTensor nk({packed.shape[0] * packed.shape[2], packed.shape[1]}, packed.dtype);
  convert(packed, nk, nk.shape[0], packed.shape[2], false);
  return transpose_matrix(nk);
}

HostTensor pack_recurrent_weight(const HostTensor& dnk, int64_t block) {
  INTERNAL_CHECK(dnk.shape.size() == 3 && block > 0 && dnk.shape[1] % block == 0)
      << "pack_recurrent_weight: a [dirs, n, k] tensor with n a multiple of the block";
  int64_t dirs = dnk.shape[0], n = dnk.shape[1], k = dnk.shape[2];
  HostTensor out({dirs, n / block, k, block}, dnk.dtype);
  size_t es = size_t(dnk.dtype.bytes());
  const char* src = static_cast<const char*>(dnk.raw());
  char* dst = static_cast<char*>(out.raw());
  for (int64_t d = 0; d < dirs; ++d)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < k; ++i)
        std::memcpy(dst + size_t(((d * (n / block) + j / block) * k + i) * block + j % block) * es,
                    src + size_t((d * n + j) * k + i) * es, es);
  return out;
}

HostTensor transpose_matrix(const HostTensor& m) {
  INTERNAL_CHECK(m.shape.size() == 2) << "transpose_matrix needs a 2-D tensor";
  int64_t rows = m.shape[0], cols = m.shape[1];
  HostTensor out({cols, rows}, m.dtype);
  size_t es = size_t(m.dtype.bytes());
  const char* src = static_cast<const char*>(m.raw());
  char* dst = static_cast<char*>(out.raw());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      std::memcpy(dst + size_t(c * rows + r) * es, src + size_t(r * cols + c) * es, es);
  return out;
}

}  // namespace tuner::ops
