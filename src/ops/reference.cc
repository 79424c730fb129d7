#include "ops/reference.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "ops/layout.h"
#include "te/float_minmax.h"

namespace tuner::ops::ref {

namespace {

// Element access in the accumulation type: double for floats, uint64_t for integers (so that
// sums and products wrap like the hardware's, without signed-overflow UB).
template <class T>
T at(const HostTensor& t, int64_t i) {
  if constexpr (std::is_same_v<T, double>) return t.get(i);
  else return T(t.get_int(i));
}
template <class T>
void put(HostTensor& t, int64_t i, T v) {
  if constexpr (std::is_same_v<T, double>) t.set(i, v);
  else t.set_int(i, int64_t(v));
}

// Copies one element between tensors of the same dtype.
void copy_elem(HostTensor& dst, int64_t di, const HostTensor& src, int64_t si) {
  if (src.dtype.is_float()) dst.set(di, src.get(si));
  else dst.set_int(di, src.get_int(si));
}

int64_t product(const Shape& s, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t d = begin; d < end; ++d) n *= s[d];
  return n;
}

// Row-major offset of idx in shape.
int64_t offset(const std::vector<int64_t>& idx, const Shape& shape) {
  int64_t off = 0;
  for (size_t d = 0; d < shape.size(); ++d) off = off * shape[d] + idx[d];
  return off;
}

// Offset in a tensor of shape `in` broadcast (right-aligned) to the output index `out`.
int64_t bcast_offset(const std::vector<int64_t>& out, const Shape& in) {
  int64_t off = 0;
  size_t base = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) off = off * in[d] + (in[d] == 1 ? 0 : out[base + d]);
  return off;
}

// All elements in the accumulation type (converted once: the loops below stay fast enough
// for full-size workloads such as a 1024^3 matmul).
template <class T>
std::vector<T> values(const HostTensor& t) {
  std::vector<T> v(size_t(t.num_elements()));
  for (int64_t i = 0; i < t.num_elements(); ++i) v[size_t(i)] = at<T>(t, i);
  return v;
}

template <class T>
HostTensor matmul_impl(const HostTensor& a, const HostTensor& b, bool tb) {
  Shape out = matmul_shape(a.shape, b.shape, tb, "matmul");
  HostTensor c(out, a.dtype);
  size_t nb = out.size() - 2;
  int64_t m = out[nb], n = out[nb + 1], k = a.shape.back();
  Shape ab(a.shape.begin(), a.shape.end() - 2), bb(b.shape.begin(), b.shape.end() - 2);
  std::vector<T> av = values<T>(a), bv = values<T>(b);
  std::vector<T> row(static_cast<size_t>(n), T(0)), bt(static_cast<size_t>(tb ? k * n : 0));
  int64_t flat = 0;
  for_each_index(Shape(out.begin(), out.begin() + nb), [&](const std::vector<int64_t>& bi) {
    const T* A = av.data() + bcast_offset(bi, ab) * m * k;
    const T* B = bv.data() + bcast_offset(bi, bb) * k * n;
    if (tb) {  // B is [n, k]: transpose it to [k, n] for the row loop below
      for (int64_t j = 0; j < n; ++j)
        for (int64_t r = 0; r < k; ++r) bt[r * n + j] = B[j * k + r];
      B = bt.data();
    }
    for (int64_t i = 0; i < m; ++i) {
      // Row i of C, accumulated over r in order (the same sum as a dot product per element).
      std::fill(row.begin(), row.end(), T(0));
      for (int64_t r = 0; r < k; ++r) {
        T x = A[i * k + r];
        for (int64_t j = 0; j < n; ++j) row[j] += x * B[r * n + j];
      }
      for (int64_t j = 0; j < n; ++j) put<T>(c, flat++, row[j]);
    }
  });
  return c;
}

template <class T>
HostTensor conv2d_impl(const HostTensor& x, const HostTensor& w, const Conv2dAttrs& a,
                       const HostTensor& bias) {
  Shape os = conv2d_shape(x.shape, w.shape, a, "conv2d");
  HostTensor out(os, x.dtype);
  int64_t C = x.shape[1], H = x.shape[2], W = x.shape[3];
  int64_t K = w.shape[0], CPG = w.shape[1], KH = w.shape[2], KW = w.shape[3];
  int64_t KPG = K / a.groups;
  std::vector<T> xv = values<T>(x), wv = values<T>(w);
  int64_t flat = 0;
  for (int64_t n = 0; n < os[0]; ++n)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t oh = 0; oh < os[2]; ++oh)
        for (int64_t ow = 0; ow < os[3]; ++ow) {
          int64_t c0 = (k / KPG) * CPG;
          T acc = 0;
          for (int64_t rc = 0; rc < CPG; ++rc)
            for (int64_t rh = 0; rh < KH; ++rh)
              for (int64_t rw = 0; rw < KW; ++rw) {
                int64_t h = oh * a.stride_h - a.pad_top + rh * a.dilation_h;
                int64_t ww = ow * a.stride_w - a.pad_left + rw * a.dilation_w;
                if (h < 0 || h >= H || ww < 0 || ww >= W) continue;  // zero padding
                acc += xv[((n * C + c0 + rc) * H + h) * W + ww] *
                       wv[((k * CPG + rc) * KH + rh) * KW + rw];
              }
          if (bias.defined()) acc += at<T>(bias, k);
          put<T>(out, flat++, acc);
        }
  return out;
}

// One pooling window: the half-open rows [h0, h1) and columns [w0, w1) inside the input, and
// the size of the window clipped to the padded input (PyTorch's count_include_pad divisor).
struct Window {
  int64_t h0, h1, w0, w1;  // clipped to the input
  int64_t padded_count;    // the window clipped to the padded input
};
// Calls f(oh, ow, window) for every output position of a 2-D pooling.
template <class F>
void for_each_window(const HostTensor& x, const Pool2dAttrs& a, const Shape& os, F&& f) {
  int64_t H = x.shape[2], W = x.shape[3];
  for (int64_t oh = 0; oh < os[2]; ++oh)
    for (int64_t ow = 0; ow < os[3]; ++ow) {
      int64_t hs = oh * a.stride_h - a.pad_top, ws = ow * a.stride_w - a.pad_left;
      int64_t he = std::min(hs + a.kernel_h, H + a.pad_bottom);
      int64_t we = std::min(ws + a.kernel_w, W + a.pad_right);
      Window win{std::max<int64_t>(hs, 0), std::min(he, H), std::max<int64_t>(ws, 0),
                 std::min(we, W), (he - hs) * (we - ws)};
      f(oh, ow, win);
    }
}

}  // namespace

HostTensor matmul(const HostTensor& a, const HostTensor& b, bool transpose_b) {
  return a.dtype.is_float() ? matmul_impl<double>(a, b, transpose_b)
                            : matmul_impl<uint64_t>(a, b, transpose_b);
}

HostTensor dense(const HostTensor& data, const HostTensor& weight, const HostTensor& bias) {
  HostTensor out = matmul(data, weight, /*transpose_b=*/true);
  if (!bias.defined()) return out;
  int64_t n = out.shape[1];
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    if (out.dtype.is_float()) out.set(i, out.get(i) + bias.get(i % n));
    else out.set_int(i, int64_t(uint64_t(out.get_int(i)) + uint64_t(bias.get_int(i % n))));
  }
  return out;
}

HostTensor conv2d(const HostTensor& data, const HostTensor& weight, const Conv2dAttrs& attrs,
                  const HostTensor& bias) {
  if (weight.shape.size() == 5) return conv2d(data, unpack_conv_weight(weight), attrs, bias);
  return data.dtype.is_float() ? conv2d_impl<double>(data, weight, attrs, bias)
                               : conv2d_impl<uint64_t>(data, weight, attrs, bias);
}

HostTensor max_pool2d(const HostTensor& x, const Pool2dAttrs& a) {
  Shape os = pool2d_shape(x.shape, a, "max_pool2d");
  HostTensor out(os, x.dtype);
  int64_t H = x.shape[2], W = x.shape[3];
  for (int64_t nc = 0; nc < os[0] * os[1]; ++nc)
    for_each_window(x, a, os, [&](int64_t oh, int64_t ow, const Window& win) {
      int64_t o = (nc * os[2] + oh) * os[3] + ow;
      if (x.dtype.is_float()) {
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t h = win.h0; h < win.h1; ++h)
          for (int64_t w = win.w0; w < win.w1; ++w) m = te::nan_max(m, x.get((nc * H + h) * W + w));
        out.set(o, m);
      } else {
        int64_t m = std::numeric_limits<int64_t>::min();
        for (int64_t h = win.h0; h < win.h1; ++h)
          for (int64_t w = win.w0; w < win.w1; ++w)
            m = std::max(m, x.get_int((nc * H + h) * W + w));
        out.set_int(o, m);
      }
    });
  return out;
}

HostTensor avg_pool2d(const HostTensor& x, const Pool2dAttrs& a) {
  Shape os = pool2d_shape(x.shape, a, "avg_pool2d");
  HostTensor out(os, x.dtype);
  int64_t H = x.shape[2], W = x.shape[3];
  for (int64_t nc = 0; nc < os[0] * os[1]; ++nc)
    for_each_window(x, a, os, [&](int64_t oh, int64_t ow, const Window& win) {
      double s = 0;
      for (int64_t h = win.h0; h < win.h1; ++h)
        for (int64_t w = win.w0; w < win.w1; ++w) s += x.get((nc * H + h) * W + w);
      int64_t count =
          a.count_include_pad ? win.padded_count : (win.h1 - win.h0) * (win.w1 - win.w0);
      out.set((nc * os[2] + oh) * os[3] + ow, s / double(count));
    });
  return out;
}

HostTensor global_avg_pool(const HostTensor& x) {
  return reduce(x, ReduceOp::Mean, {2, 3}, /*keepdims=*/true);
}

HostTensor global_max_pool(const HostTensor& x) {
  return reduce(x, ReduceOp::Max, {2, 3}, /*keepdims=*/true);
}

HostTensor unary(const HostTensor& x, UnaryOp op, double p0, double p1) {
  HostTensor out(x.shape, x.dtype);
  if (!x.dtype.is_float()) {  // the integer-capable ops
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      int64_t v = x.get_int(i), r = 0;
      switch (op) {
        case UnaryOp::Relu: r = std::max<int64_t>(v, 0); break;
        case UnaryOp::Clip: r = std::min(std::max(v, int64_t(p0)), int64_t(p1)); break;
        case UnaryOp::Neg: r = int64_t(0 - uint64_t(v)); break;
        case UnaryOp::Abs: r = v < 0 ? int64_t(0 - uint64_t(v)) : v; break;
        default: INTERNAL_CHECK(false) << "unary op on " << x.dtype.str();
      }
      out.set_int(i, r);
    }
    return out;
  }
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    double v = x.get(i), r = 0;
    switch (op) {
      case UnaryOp::Relu: r = std::max(v, 0.0); break;
      case UnaryOp::Clip: r = std::min(std::max(v, p0), p1); break;
      case UnaryOp::Sigmoid: r = 1.0 / (1.0 + std::exp(-v)); break;
      case UnaryOp::Tanh: r = std::tanh(v); break;
      case UnaryOp::Exp: r = std::exp(v); break;
      case UnaryOp::Log: r = std::log(v); break;
      case UnaryOp::Sqrt: r = std::sqrt(v); break;
      case UnaryOp::Erf: r = std::erf(v); break;
      case UnaryOp::Gelu: r = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); break;
      case UnaryOp::Silu: r = v / (1.0 + std::exp(-v)); break;
      case UnaryOp::Hardswish: r = v * std::min(std::max(v + 3.0, 0.0), 6.0) / 6.0; break;
      case UnaryOp::Hardsigmoid: r = std::max(0.0, std::min(1.0, p0 * v + p1)); break;
      case UnaryOp::LeakyRelu: r = v >= 0 ? v : p0 * v; break;
      case UnaryOp::Neg: r = -v; break;
      case UnaryOp::Abs: r = std::fabs(v); break;
    }
    out.set(i, r);
  }
  return out;
}

HostTensor binary(const HostTensor& a, const HostTensor& b, BinaryOp op) {
  Shape os = broadcast_shapes({a.shape, b.shape}, "binary");
  bool cmp = op == BinaryOp::Equal || op == BinaryOp::Less || op == BinaryOp::Greater;
  HostTensor out(os, cmp ? te::DataType::boolean() : a.dtype);
  int64_t flat = 0;
  bool fl = a.dtype.is_float();
  for_each_index(os, [&](const std::vector<int64_t>& idx) {
    int64_t ia = bcast_offset(idx, a.shape), ib = bcast_offset(idx, b.shape);
    if (cmp) {
      // Integers compare exactly; stored floats are exact in double.
      double x = fl ? a.get(ia) : 0, y = fl ? b.get(ib) : 0;
      int64_t p = fl ? 0 : a.get_int(ia), q = fl ? 0 : b.get_int(ib);
      bool r = op == BinaryOp::Equal ? (fl ? x == y : p == q)
               : op == BinaryOp::Less ? (fl ? x < y : p < q)
                                      : (fl ? x > y : p > q);
      out.set_int(flat++, r);
      return;
    }
    if (fl) {
      double x = a.get(ia), y = b.get(ib), r = 0;
      switch (op) {
        case BinaryOp::Add: r = x + y; break;
        case BinaryOp::Sub: r = x - y; break;
        case BinaryOp::Mul: r = x * y; break;
        case BinaryOp::Div: r = x / y; break;
        case BinaryOp::Pow: r = std::pow(x, y); break;
        case BinaryOp::Maximum: r = te::nan_max(x, y); break;
        case BinaryOp::Minimum: r = te::nan_min(x, y); break;
        default: break;
      }
      out.set(flat++, r);
      return;
    }
    uint64_t x = uint64_t(a.get_int(ia)), y = uint64_t(b.get_int(ib));
    int64_t r = 0;
    switch (op) {
      case BinaryOp::Add: r = int64_t(x + y); break;
      case BinaryOp::Sub: r = int64_t(x - y); break;
      case BinaryOp::Mul: r = int64_t(x * y); break;
      case BinaryOp::Div:  // truncating; a / 0 is 0, a / -1 wraps (ops::integer_div)
        r = y == 0 ? 0 : int64_t(y) == -1 ? int64_t(0 - x) : int64_t(x) / int64_t(y);
        break;
      case BinaryOp::Maximum: r = std::max(int64_t(x), int64_t(y)); break;
      case BinaryOp::Minimum: r = std::min(int64_t(x), int64_t(y)); break;
      default: INTERNAL_CHECK(false) << "binary op on " << a.dtype.str();
    }
    out.set_int(flat++, r);
  });
  return out;
}

HostTensor where(const HostTensor& cond, const HostTensor& a, const HostTensor& b) {
  Shape os = broadcast_shapes({cond.shape, a.shape, b.shape}, "where");
  HostTensor out(os, a.dtype);
  int64_t flat = 0;
  for_each_index(os, [&](const std::vector<int64_t>& idx) {
    const HostTensor& src = cond.get_int(bcast_offset(idx, cond.shape)) ? a : b;
    copy_elem(out, flat++, src, bcast_offset(idx, src.shape));
  });
  return out;
}

HostTensor cast(const HostTensor& x, te::DataType dtype) {
  HostTensor out(x.shape, dtype);
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    if (x.dtype.is_float()) out.set(i, x.get(i));
    else out.set_int(i, x.get_int(i));
  }
  return out;
}

HostTensor reduce(const HostTensor& x, ReduceOp op, const std::vector<int64_t>& axes,
                  bool keepdims) {
  std::vector<int> ax = normalize_axes(axes, int(x.shape.size()), "reduce");
  Shape os = reduce_shape(x.shape, ax, keepdims);
  Shape kept = reduce_shape(x.shape, ax, /*keepdims=*/true);  // same offsets as os
  HostTensor out(os, x.dtype);
  int64_t n = out.num_elements(), count = x.num_elements() / n;
  bool fl = x.dtype.is_float();
  double finit = op == ReduceOp::Max    ? -std::numeric_limits<double>::infinity()
                 : op == ReduceOp::Min  ? std::numeric_limits<double>::infinity()
                 : op == ReduceOp::Prod ? 1.0
                                        : 0.0;
  int64_t iinit = op == ReduceOp::Max    ? std::numeric_limits<int64_t>::min()
                  : op == ReduceOp::Min  ? std::numeric_limits<int64_t>::max()
                  : op == ReduceOp::Prod ? 1
                                         : 0;
  std::vector<double> facc(n, finit);
  std::vector<int64_t> iacc(n, iinit);
  int64_t flat = 0;
  for_each_index(x.shape, [&](const std::vector<int64_t>& idx) {
    int64_t o = bcast_offset(idx, kept);  // reduced dims are size 1 in `kept`
    if (fl) {
      double v = x.get(flat++);
      facc[o] = op == ReduceOp::Max    ? te::nan_max(facc[o], v)
                : op == ReduceOp::Min  ? te::nan_min(facc[o], v)
                : op == ReduceOp::Prod ? facc[o] * v
                                       : facc[o] + v;
    } else {
      int64_t v = x.get_int(flat++);
      iacc[o] = op == ReduceOp::Max    ? std::max(iacc[o], v)
                : op == ReduceOp::Min  ? std::min(iacc[o], v)
                : op == ReduceOp::Prod ? int64_t(uint64_t(iacc[o]) * uint64_t(v))
                                       : int64_t(uint64_t(iacc[o]) + uint64_t(v));
    }
  });
  for (int64_t i = 0; i < n; ++i) {
    if (fl) out.set(i, op == ReduceOp::Mean ? facc[i] / double(count) : facc[i]);
    else out.set_int(i, iacc[i]);
  }
  return out;
}

namespace {

// Softmax-like ops along one axis: f(row values) -> row results, over every row.
template <class F>
HostTensor along_axis(const HostTensor& x, int64_t axis, F&& f) {
  int a = normalize_axis(axis, int(x.shape.size()), "softmax");
  int64_t outer = product(x.shape, 0, a), len = x.shape[a];
  int64_t inner = product(x.shape, a + 1, x.shape.size());
  HostTensor out(x.shape, x.dtype);
  std::vector<double> row(len);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t j = 0; j < len; ++j) row[j] = x.get((o * len + j) * inner + i);
      f(row);
      for (int64_t j = 0; j < len; ++j) out.set((o * len + j) * inner + i, row[j]);
    }
  return out;
}

}  // namespace

HostTensor softmax(const HostTensor& x, int64_t axis) {
  return along_axis(x, axis, [](std::vector<double>& r) {
    double m = *std::max_element(r.begin(), r.end()), s = 0;
    for (double v : r) s += std::exp(v - m);
    for (double& v : r) v = std::exp(v - m) / s;
  });
}

HostTensor log_softmax(const HostTensor& x, int64_t axis) {
  return along_axis(x, axis, [](std::vector<double>& r) {
    double m = *std::max_element(r.begin(), r.end()), s = 0;
    for (double v : r) s += std::exp(v - m);
    for (double& v : r) v = v - m - std::log(s);
  });
}

HostTensor layer_norm(const HostTensor& x, const HostTensor& gamma, const HostTensor& beta,
                      const std::vector<int64_t>& axes, double epsilon) {
  std::vector<int> ax = trailing_axes(axes, int(x.shape.size()), "layer_norm");
  int64_t n = product(x.shape, x.shape.size() - ax.size(), x.shape.size());
  int64_t outer = x.num_elements() / n;
  HostTensor out(x.shape, x.dtype);
  for (int64_t o = 0; o < outer; ++o) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < n; ++j) mean += x.get(o * n + j);
    mean /= double(n);
    for (int64_t j = 0; j < n; ++j) var += (x.get(o * n + j) - mean) * (x.get(o * n + j) - mean);
    var /= double(n);
    double inv = 1.0 / std::sqrt(var + epsilon);
    for (int64_t j = 0; j < n; ++j) {
      double v = (x.get(o * n + j) - mean) * inv * gamma.get(j);
      out.set(o * n + j, beta.defined() ? v + beta.get(j) : v);
    }
  }
  return out;
}

HostTensor transpose(const HostTensor& x, const std::vector<int64_t>& perm) {
  Shape os = transpose_shape(x.shape, perm, "transpose");
  HostTensor out(os, x.dtype);
  std::vector<int64_t> in_idx(x.shape.size());
  int64_t flat = 0;
  for_each_index(os, [&](const std::vector<int64_t>& idx) {
    for (size_t d = 0; d < perm.size(); ++d) in_idx[perm[d]] = idx[d];
    copy_elem(out, flat++, x, offset(in_idx, x.shape));
  });
  return out;
}

HostTensor reshape(const HostTensor& x, const std::vector<int64_t>& to) {
  HostTensor out(reshape_shape(x.shape, to, "reshape"), x.dtype);
  std::memcpy(out.raw(), x.raw(), x.bytes());
  return out;
}

HostTensor concat(const std::vector<HostTensor>& inputs, int64_t axis) {
  int a = normalize_axis(axis, int(inputs.at(0).shape.size()), "concat");
  std::vector<Shape> shapes;
  for (auto& t : inputs) shapes.push_back(t.shape);
  Shape os = concat_shape(shapes, a, "concat");
  HostTensor out(os, inputs[0].dtype);
  int64_t flat = 0;
  for_each_index(os, [&](const std::vector<int64_t>& idx) {
    std::vector<int64_t> in = idx;
    size_t t = 0;
    while (in[a] >= inputs[t].shape[a]) in[a] -= inputs[t++].shape[a];
    copy_elem(out, flat++, inputs[t], offset(in, inputs[t].shape));
  });
  return out;
}

HostTensor pad(const HostTensor& x, const std::vector<int64_t>& pads, double value) {
  Shape os = pad_shape(x.shape, pads, "pad");
  HostTensor out(os, x.dtype);
  size_t n = x.shape.size();
  int64_t flat = 0;
  std::vector<int64_t> in(n);
  for_each_index(os, [&](const std::vector<int64_t>& idx) {
    bool inside = true;
    for (size_t d = 0; d < n; ++d) {
      in[d] = idx[d] - pads[d];
      inside = inside && in[d] >= 0 && in[d] < x.shape[d];
    }
    if (inside) copy_elem(out, flat, x, offset(in, x.shape));
    else out.set(flat, value);
    ++flat;
  });
  return out;
}

HostTensor slice(const HostTensor& x, const std::vector<int64_t>& starts,
                 const std::vector<int64_t>& ends, const std::vector<int64_t>& axes,
                 const std::vector<int64_t>& steps) {
  std::vector<SliceDim> dims = resolve_slice(x.shape, starts, ends, axes, steps, "slice");
  Shape os;
  for (auto& d : dims) os.push_back(d.extent);
  HostTensor out(os, x.dtype);
  std::vector<int64_t> in(dims.size());
  int64_t flat = 0;
  for_each_index(os, [&](const std::vector<int64_t>& idx) {
    for (size_t d = 0; d < dims.size(); ++d) in[d] = dims[d].start + idx[d] * dims[d].step;
    copy_elem(out, flat++, x, offset(in, x.shape));
  });
  return out;
}

HostTensor gather(const HostTensor& data, const HostTensor& indices, int64_t axis) {
  int a = normalize_axis(axis, int(data.shape.size()), "gather");
  Shape os = gather_shape(data.shape, indices.shape, a);
  HostTensor out(os, data.dtype);
  int64_t dim = data.shape[a];
  size_t ir = indices.shape.size();
  std::vector<int64_t> in(data.shape.size());
  int64_t flat = 0;
  for_each_index(os, [&](const std::vector<int64_t>& idx) {
    std::vector<int64_t> ii(idx.begin() + a, idx.begin() + a + ir);
    int64_t j = indices.get_int(offset(ii, indices.shape));
    if (j < 0) j += dim;
    j = std::clamp<int64_t>(j, 0, dim - 1);
    for (int d = 0; d < a; ++d) in[d] = idx[d];
    in[a] = j;
    for (size_t d = a + 1; d < data.shape.size(); ++d) in[d] = idx[d - 1 + ir];
    copy_elem(out, flat++, data, offset(in, data.shape));
  });
  return out;
}

}  // namespace tuner::ops::ref
