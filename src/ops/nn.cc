#include "ops/nn.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>

#include "ops/op_util.h"
#include "ops/transform.h"

namespace tuner::ops {

using te::Expr;
using te::Var;

te::Tensor matmul(const te::Tensor& a, const te::Tensor& b, bool transpose_b,
                  const std::string& name) {
  detail::check_same_dtype(a, b, name);
  detail::check_numeric(a, name);
  Shape out = matmul_shape(a.shape(), b.shape(), transpose_b, name);
  size_t nb = out.size() - 2;
  Shape a_batch(a.shape().begin(), a.shape().end() - 2);
  Shape b_batch(b.shape().begin(), b.shape().end() - 2);
  int64_t k_extent = a.shape().back();
  return te::compute(
      out,
      [&](const std::vector<Var>& ax) {
        te::IterVar k = te::reduce_axis(k_extent, "k");
        std::vector<Expr> batch(ax.begin(), ax.begin() + nb);
        std::vector<Expr> ia = detail::broadcast_index(batch, a_batch);
        std::vector<Expr> ib = detail::broadcast_index(batch, b_batch);
        ia.insert(ia.end(), {ax[nb], k.var});
        if (transpose_b) ib.insert(ib.end(), {ax[nb + 1], k.var});
        else ib.insert(ib.end(), {k.var, ax[nb + 1]});
        return te::sum(a(ia) * b(ib), {k});
      },
      name, "matmul", {{"transpose_b", transpose_b ? 1 : 0}});
}

te::Tensor matmul_packed(const te::Tensor& a, const te::Tensor& b, const std::string& name, bool byte_dot) {
  detail::check_same_dtype(a, b, name);
  detail::check_numeric(a, name);
  USER_CHECK(a.ndim() >= 2 && b.ndim() == 3 && b.shape()[1] == a.shape().back())
      << name << ": A [..., m, k] and a packed B [n/b, k, b] needed, got "
      << te::shape_str(a.shape()) << " and " << te::shape_str(b.shape());
  int64_t block = b.shape()[2], k_extent = b.shape()[1];
  Shape out(a.shape().begin(), a.shape().end() - 1);
  out.push_back(b.shape()[0] * block);
  size_t nb = out.size() - 2;
  return te::compute(
      out,
      [&](const std::vector<Var>& ax) {
        te::IterVar k = te::reduce_axis(k_extent, "k");
        std::vector<Expr> ia(ax.begin(), ax.begin() + nb);
        ia.insert(ia.end(), {ax[nb], k.var});
        Expr j = ax[nb + 1];
        Expr x = a(ia), w = b(te::floordiv(j, Expr(block)), k.var, te::floormod(j, Expr(block)));
        return te::sum(byte_dot ? te::call(te::Intrinsic::DotU8S8x4, {x, w}) : x * w, {k});
      },
      name, "matmul",
      byte_dot ? std::map<std::string, int64_t>{{"transpose_b", 0}, {"b_block", block}, {"byte_dot", 1}}
               : std::map<std::string, int64_t>{{"transpose_b", 0}, {"b_block", block}});
}

namespace {

// out[n, k, ...] + bias[k] along dimension `axis`.
te::Tensor add_bias(const te::Tensor& out, const te::Tensor& bias, int axis,
                    const std::string& name) {
  detail::check_same_dtype(out, bias, name);
  USER_CHECK(bias.shape() == Shape{out.shape()[axis]})
      << name << ": bias must have shape " << out.shape()[axis] << ", got "
      << te::shape_str(bias.shape());
  return te::compute(
      out.shape(),
      [&](const std::vector<Var>& ax) { return out(detail::exprs(ax)) + bias(ax[axis]); },
      name + "_bias");
}

}  // namespace

te::Tensor dense(const te::Tensor& data, const te::Tensor& weight, const te::Tensor& bias,
                 const std::string& name) {
  USER_CHECK(data.ndim() == 2 && weight.ndim() == 2)
      << name << ": data [M, K] and weight [N, K] must be 2-D, got " << te::shape_str(data.shape())
      << " and " << te::shape_str(weight.shape());
  te::Tensor out = matmul(data, weight, /*transpose_b=*/true, name);
  return bias ? add_bias(out, bias, 1, name) : out;
}

namespace {

// NCHW data padded with `fill` as a conv's input, its columns split by parity:
// out[n, c, h, p, x] = padded[n, c, h, 2 x + p].
te::Tensor pad_split_columns(const te::Tensor& data, const Conv2dAttrs& at, double fill, const std::string& name) {
  const Shape& ds = data.shape();
  std::vector<int64_t> pads = {0, 0, at.pad_top, at.pad_left, 0, 0, at.pad_bottom, at.pad_right};
  int64_t rows = ds[2] + at.pad_top + at.pad_bottom, pairs = (ds[3] + at.pad_left + at.pad_right + 1) / 2;
  return te::compute(
      {ds[0], ds[1], rows, 2, pairs},
      [&](const std::vector<Var>& ax) {
        Expr column = detail::scaled(ax[4], 2) + Expr(ax[3]);
        return padded_read(data, pads, {ax[0], ax[1], ax[2], column}, {ds[0] - 1, ds[1] - 1, rows - 1, 2 * pairs - 1}, fill);
      },
      name, "pad");
}

}  // namespace

te::Tensor conv2d(const te::Tensor& data, const te::Tensor& weight, const Conv2dAttrs& at,
                  const te::Tensor& bias, const std::string& name) {
  if (!at.row_words) detail::check_same_dtype(data, weight, name);
  detail::check_numeric(data, name);
  // Conv2dAttrs::row_words: the weight [C, 1, KH, 1] holds a row's taps in one word.
  INTERNAL_CHECK(!at.row_words || (at.byte_dot && data.dtype() == te::DataType::u8() && weight.ndim() == 4 &&
                                   weight.shape()[3] == 1 && at.row_words <= 3 && at.dilation_w == 1))
      << name << ": row words are a byte-dot weight of one column, up to 3 taps";
  Shape window = weight.shape();
  if (at.row_words) window[3] = at.row_words;
  Shape out = conv2d_shape(data.shape(), window, at, name);
  // A packed weight [K/b, C, KH, KW, b] is read at [k / b, c, rh, rw, k % b].
  int64_t block = weight.ndim() == 5 ? weight.shape()[4] : 0;
  int64_t c_per_group = weight.shape()[1], k_per_group = out[1] / at.groups;
  int64_t kh = weight.shape()[2], kw = weight.shape()[3], window_w = window[3];
  te::Tensor in = data;
  // A depthwise conv with a column stride of 2 reads its padded input with even and odd
  // columns apart ([n, c, h, column parity, column / 2]): every tap then loads a contiguous
  // vector instead of gathering every other element (AMD Zen 1, mobilenet_v2's layers:
  // 576x14x14 0.063 -> 0.044 ms, 144x56x56 0.185 -> 0.157, 96x112x112 0.66 -> 0.55).
  // Row words read each row's bytes as one window instead (codegen::byte_window).
  bool split_columns = at.has_padding() && c_per_group == 1 && !block && at.stride_w == 2 &&
                       at.dilation_w == 1 && !at.row_words;
  if (split_columns) in = pad_split_columns(data, at, at.byte_dot ? double(at.pad_word) : 0.0, name + "_pad");
  else if (at.has_padding())
    in = pad(data, {0, 0, at.pad_top, at.pad_left, 0, 0, at.pad_bottom, at.pad_right},
             at.byte_dot ? double(at.pad_word) : 0.0, name + "_pad");
  INTERNAL_CHECK(!at.byte_dot || at.row_words || data.dtype() == te::DataType::i32())
      << name << ": byte products need int32 words";
  std::map<std::string, int64_t> attrs = {
      {"stride_h", at.stride_h},     {"stride_w", at.stride_w},   {"dilation_h", at.dilation_h},
      {"dilation_w", at.dilation_w}, {"groups", at.groups},       {"pad_top", at.pad_top},
      {"pad_left", at.pad_left},     {"pad_bottom", at.pad_bottom}, {"pad_right", at.pad_right},
      {"kernel_h", kh},              {"kernel_w", window_w}};
  if (block) attrs["weight_block"] = block;
  if (at.byte_dot) attrs["byte_dot"] = 1;
  if (at.row_words) attrs["row_words"] = at.row_words;
  te::Tensor conv = te::compute(
      out,
      [&](const std::vector<Var>& ax) {
        te::IterVar rh = te::reduce_axis(kh, "rh"), rw = te::reduce_axis(kw, "rw");
        std::vector<te::IterVar> raxes;
        Expr ci, wc;  // input channel, weight channel
        // First input channel of the output channel's group (undefined without groups).
        Expr group;
        if (at.groups > 1)
          group = k_per_group == 1 ? Expr(ax[1]) : te::floordiv(ax[1], Expr(k_per_group));
        Expr group_base = group ? detail::scaled(group, c_per_group) : Expr();
        if (c_per_group == 1) {  // depthwise-like: no channel reduction
          ci = group_base ? group_base : Expr(0);
          wc = Expr(0);
        } else {
          te::IterVar rc = te::reduce_axis(c_per_group, "rc");
          raxes.push_back(rc);
          ci = group_base ? group_base + rc.var : Expr(rc.var);
          wc = rc.var;
        }
        raxes.push_back(rh);
        raxes.push_back(rw);
        Expr h = detail::scaled(ax[2], at.stride_h) + detail::scaled(rh.var, at.dilation_h);
        Expr w = detail::scaled(ax[3], at.stride_w) + detail::scaled(rw.var, at.dilation_w);
        Expr wv = block ? weight(te::floordiv(ax[1], Expr(block)), wc, rh.var, rw.var,
                                 te::floormod(ax[1], Expr(block)))
                        : weight(ax[1], wc, rh.var, rw.var);
        if (at.row_words) {  // the word of the row's bytes at columns w, w + 1, ... (top bytes 0)
          Expr word;
          for (int64_t j = 0; j < at.row_words; ++j) {
            Expr byte = te::cast(te::DataType::i32(), in(ax[0], ci, h, w + Expr(j)));
            Expr part = j ? byte * te::make_const(te::DataType::i32(), double(int64_t(1) << (8 * j))) : byte;
            word = j ? word + part : part;
          }
          return te::sum(te::call(te::Intrinsic::DotU8S8x4, {word, wv}), raxes);
        }
        if (split_columns) {  // column 2 x + rw: parity rw % 2, pair x + rw / 2
          Expr pair = Expr(ax[3]) + te::floordiv(rw.var, Expr(2));
          return te::sum(in(ax[0], ci, h, te::floormod(rw.var, Expr(2)), pair) * wv, raxes);
        }
        Expr x = in(ax[0], ci, h, w);
        return te::sum(at.byte_dot ? te::call(te::Intrinsic::DotU8S8x4, {x, wv}) : x * wv, raxes);
      },
      name, "conv2d", attrs);
  return bias ? add_bias(conv, bias, 1, name) : conv;
}

namespace {

// The int32 word of bytes 4i..4i+3 along one axis of x (uint8, or int8 + 128): `at(j)` reads
// byte j; bytes at or past `extent` are `fill`.
Expr byte_word(const te::Tensor& x, const Expr& i, int64_t extent, int64_t fill,
               const std::function<Expr(const Expr&)>& at) {
  te::DataType i32 = te::DataType::i32();
  Expr word;
  for (int64_t j = 0; j < 4; ++j) {
    Expr index = detail::scaled(i, 4) + Expr(j);
    Expr byte = te::cast(i32, at(index));
    if (x.dtype() == te::DataType::i8()) byte = byte + Expr(128);
    if (extent % 4) byte = te::if_then_else(index < Expr(extent), byte, te::make_const(i32, double(fill)));
    // The top byte sign-extended: the word's value then fits in int32 without wrapping.
    if (j == 3) byte = te::cast(i32, te::cast(te::DataType::i8(), te::cast(te::DataType::u8(), byte)));
    Expr part = j ? byte * te::make_const(i32, double(int64_t(1) << (8 * j))) : byte;
    word = j ? word + part : part;
  }
  return word;
}

void check_bytes(const te::Tensor& x, int64_t fill, const std::string& name) {
  USER_CHECK(x.dtype() == te::DataType::i8() || x.dtype() == te::DataType::u8())
      << name << ": byte words are made of uint8 or int8 data, got " << x.dtype().str();
  INTERNAL_CHECK(fill >= 0 && fill <= 255) << name << ": the fill is a uint8 value";
}

}  // namespace

te::Tensor byte_words(const te::Tensor& x, int64_t fill, const std::array<int64_t, 4>& pads,
                      const std::string& name) {
  check_bytes(x, fill, name);
  USER_CHECK(x.ndim() == 4) << name << ": byte words of channels need [N, C, H, W] data, got "
                            << te::shape_str(x.shape());
  INTERNAL_CHECK(std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p >= 0; })) << name << ": pads < 0";
  int64_t c = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
  Expr fill_word = te::make_const(te::DataType::i32(), double(int32_t(uint32_t(fill) * 0x01010101u)));
  return te::compute(
      {x.shape()[0], (c + 3) / 4, h + pads[0] + pads[2], w + pads[1] + pads[3]},
      [&](const std::vector<Var>& o) {
        Expr row = pads[0] ? Expr(o[2]) - Expr(pads[0]) : Expr(o[2]);
        Expr col = pads[1] ? Expr(o[3]) - Expr(pads[1]) : Expr(o[3]);
        Expr word = byte_word(x, o[1], c, fill, [&](const Expr& ch) { return x(o[0], ch, row, col); });
        std::vector<Expr> inside;
        if (pads[0]) inside.push_back(row >= Expr(0));
        if (pads[2]) inside.push_back(row < Expr(h));
        if (pads[1]) inside.push_back(col >= Expr(0));
        if (pads[3]) inside.push_back(col < Expr(w));
        return inside.empty() ? word : te::if_then_else(detail::all_of(inside), word, fill_word);
      },
      name, "byte_words");
}

te::Tensor byte_words_last(const te::Tensor& x, const std::string& name) {
  check_bytes(x, 0, name);
  USER_CHECK(x.ndim() >= 1) << name << ": byte words of a scalar";
  Shape out = x.shape();
  int64_t k = out.back();
  out.back() = (k + 3) / 4;
  return te::compute(
      out,
      [&](const std::vector<Var>& o) {
        std::vector<Expr> idx = detail::exprs(o);
        return byte_word(x, o.back(), k, 0, [&](const Expr& i) {
          idx.back() = i;
          return x(idx);
        });
      },
      name, "byte_words");
}

te::Tensor conv2d_transpose(const te::Tensor& data, const te::Tensor& weight,
                            const ConvTranspose2dAttrs& at, const te::Tensor& bias,
                            const std::string& name) {
  detail::check_same_dtype(data, weight, name);
  detail::check_numeric(data, name);
  conv2d_transpose_shape(data.shape(), weight.shape(), at, name);
  const Shape& in = data.shape();
  int64_t kh = weight.shape()[2], kw = weight.shape()[3];
  int64_t c_per_group = in[1] / at.groups, k_per_group = weight.shape()[1];
  // Input element (i, j) lands at (i * stride + before) of the spread input; `before` and
  // `after` (negative: cropped) make a stride-1 conv over it give the transposed conv.
  int64_t top = at.dilation_h * (kh - 1) - at.pad_top;
  int64_t left = at.dilation_w * (kw - 1) - at.pad_left;
  int64_t bottom = at.dilation_h * (kh - 1) - at.pad_bottom + at.output_padding_h;
  int64_t right = at.dilation_w * (kw - 1) - at.pad_right + at.output_padding_w;
  Shape spread_shape = {in[0], in[1], (in[2] - 1) * at.stride_h + 1 + top + bottom,
                        (in[3] - 1) * at.stride_w + 1 + left + right};
  te::Tensor spread = te::compute(
      spread_shape,
      [&](const std::vector<Var>& ax) {
        std::vector<Expr> conds;
        // Source index along one spatial axis, with the conditions for it to exist.
        auto source = [&](const Var& o, int64_t before, int64_t stride, int64_t extent) {
          Expr pos = before ? Expr(o) - Expr(before) : Expr(o);
          if (before > 0) conds.push_back(pos >= Expr(0));
          if (stride > 1) conds.push_back(te::eq(te::floormod(pos, Expr(stride)), Expr(0)));
          Expr i = stride > 1 ? te::floordiv(pos, Expr(stride)) : pos;
          conds.push_back(i < Expr(extent));
          return i;
        };
        Expr h = source(ax[2], top, at.stride_h, in[2]);
        Expr w = source(ax[3], left, at.stride_w, in[3]);
        return te::if_then_else(detail::all_of(conds), data(ax[0], ax[1], h, w),
                                te::make_const(data.dtype(), 0));
      },
      name + "_spread", "pad");
  // w'[k, c, rh, rw] = w[group * c_per_group + c, k % k_per_group, KH-1-rh, KW-1-rw].
  te::Tensor flipped = te::compute(
      {k_per_group * at.groups, c_per_group, kh, kw},
      [&](const std::vector<Var>& ax) {
        Expr c = Expr(ax[1]), k = Expr(ax[0]);
        if (at.groups > 1) {
          c = detail::scaled(te::floordiv(ax[0], Expr(k_per_group)), c_per_group) + ax[1];
          k = te::floormod(ax[0], Expr(k_per_group));
        }
        return weight(c, k, Expr(kh - 1) - ax[2], Expr(kw - 1) - ax[3]);
      },
      name + "_weight");
  Conv2dAttrs ca;
  ca.dilation_h = at.dilation_h, ca.dilation_w = at.dilation_w;
  ca.groups = at.groups;
  return conv2d(spread, flipped, ca, bias, name);
}

namespace {

std::map<std::string, int64_t> pool_attrs(const Pool2dAttrs& a, bool avg) {
  std::map<std::string, int64_t> m = {
      {"kernel_h", a.kernel_h},     {"kernel_w", a.kernel_w},   {"stride_h", a.stride_h},
      {"stride_w", a.stride_w},     {"pad_top", a.pad_top},     {"pad_left", a.pad_left},
      {"pad_bottom", a.pad_bottom}, {"pad_right", a.pad_right}, {"ceil_mode", a.ceil_mode}};
  if (avg) m["count_include_pad"] = a.count_include_pad;
  // Only when dilated, so undilated workloads keep their identity (and database records).
  if (a.dilation_h != 1 || a.dilation_w != 1) {
    m["dilation_h"] = a.dilation_h;
    m["dilation_w"] = a.dilation_w;
  }
  return m;
}

// Rows and columns past the input's end that some window of `out` reaches (bottom padding
// or ceil mode).
std::pair<int64_t, int64_t> pool_overhang(const Shape& in, const Pool2dAttrs& a, const Shape& out) {
  int64_t kh = a.dilation_h * (a.kernel_h - 1) + 1, kw = a.dilation_w * (a.kernel_w - 1) + 1;
  return {std::max<int64_t>(0, (out[2] - 1) * a.stride_h + kh - (in[2] + a.pad_top)),
          std::max<int64_t>(0, (out[3] - 1) * a.stride_w + kw - (in[3] + a.pad_left))};
}

// A pooling window reduction: combine(source over the window) where source is the input
// element or `outside` in the padding (and past the input's end in ceil mode). With
// `padded`, `data` already holds the padding (pad_top rows and pad_left columns before the
// input, the overhang after it) and no window tests its border.
te::Tensor pool_reduce(const te::Tensor& data, const Pool2dAttrs& a, const Shape& out,
                       te::ReduceKind kind, Expr outside, const std::string& name, bool avg,
                       bool padded = false) {
  int64_t h_in = data.shape()[2], w_in = data.shape()[3];
  auto [h_over, w_over] = padded ? std::pair<int64_t, int64_t>{0, 0}
                                 : pool_overhang(data.shape(), a, out);
  int64_t top = padded ? 0 : a.pad_top, left = padded ? 0 : a.pad_left;
  return te::compute(
      out,
      [&](const std::vector<Var>& ax) {
        te::IterVar rh = te::reduce_axis(a.kernel_h, "rh"), rw = te::reduce_axis(a.kernel_w, "rw");
        Expr h = detail::scaled(ax[2], a.stride_h) + detail::scaled(rh.var, a.dilation_h);
        Expr w = detail::scaled(ax[3], a.stride_w) + detail::scaled(rw.var, a.dilation_w);
        if (top) h = h - Expr(top);
        if (left) w = w - Expr(left);
        std::vector<Expr> conds;
        if (top) conds.push_back(h >= Expr(0));
        if (h_over) conds.push_back(h < Expr(h_in));
        if (left) conds.push_back(w >= Expr(0));
        if (w_over) conds.push_back(w < Expr(w_in));
        Expr v = data(ax[0], ax[1], h, w);
        if (Expr c = detail::all_of(conds)) v = te::if_then_else(c, v, outside);
        return te::reduce(kind, v, {rh, rw});
      },
      name, "pool", pool_attrs(a, avg));
}

}  // namespace

te::Tensor max_pool2d(const te::Tensor& data, const Pool2dAttrs& a, const std::string& name) {
  detail::check_numeric(data, name);
  Shape out = pool2d_shape(data.shape(), a, name);
  Expr lowest = te::reduce_identity(te::ReduceKind::Max, data.dtype());
  auto [bottom, right] = pool_overhang(data.shape(), a, out);
  bool borders = a.pad_top || a.pad_left || bottom || right;
  if (!data.dtype().is_float() && borders)
    return pool_reduce(data, a, out, te::ReduceKind::Max, lowest, name, false);
  // A float max pool reads its input padded with -inf by a stage of its own, as a conv reads
  // its zero padding: the schedule then places the border tests (resnet18's 3x3/2 pool
  // tested every tap's stride-2 vector load: LLVM scalarized them on AVX2, 10x ORT's time).
  te::Tensor p = !borders ? data
                          : pad(data, {0, 0, a.pad_top, a.pad_left, 0, 0, bottom, right},
                                -std::numeric_limits<double>::infinity(), name + "_pad");
  // A max over a window is a max over its rows of a max over its columns: a window of 25 or
  // more runs as a pass along the rows, then one down the columns (kh + kw comparisons per
  // output instead of kh x kw). YOLO's spatial pyramid pooling, 256 channels at 20x20,
  // stride 1, alone (Intel Sapphire Rapids, 2 threads): 5x5 0.107 -> 0.044 ms, 9x9 0.253 ->
  // 0.097, 13x13 0.467 -> 0.127.
  if (a.kernel_h * a.kernel_w >= 25 && a.kernel_h > 1 && a.kernel_w > 1) {
    Pool2dAttrs across = a, down = a;
    across.kernel_h = across.stride_h = across.dilation_h = 1;
    down.kernel_w = down.stride_w = down.dilation_w = 1;
    across.pad_top = across.pad_left = across.pad_bottom = across.pad_right = 0;
    down.pad_top = down.pad_left = down.pad_bottom = down.pad_right = 0;
    Shape rows = {out[0], out[1], p.shape()[2], out[3]};
    te::Tensor r = pool_reduce(p, across, rows, te::ReduceKind::Max, lowest, name + "_rows", false, true);
    return pool_reduce(r, down, out, te::ReduceKind::Max, lowest, name, false, true);
  }
  return pool_reduce(p, a, out, te::ReduceKind::Max, lowest, name, false, true);
}

te::Tensor avg_pool2d(const te::Tensor& data, const Pool2dAttrs& a, const std::string& name) {
  detail::check_float(data, name);
  Shape out = pool2d_shape(data.shape(), a, name);
  te::Tensor s = pool_reduce(data, a, out, te::ReduceKind::Sum, te::make_const(data.dtype(), 0),
                             name + "_sum", true);
  int64_t h_in = data.shape()[2], w_in = data.shape()[3];
  return te::compute(
      out,
      [&](const std::vector<Var>& ax) {
        // The divisor: the taps in the padded input (count_include_pad) or in the input
        // itself; a constant when no window is clipped.
        auto count = [&](Expr o, int64_t stride, int64_t k, int64_t dil, int64_t in, int64_t p0,
                         int64_t p1, int64_t n_out) -> Expr {
          int64_t lo = a.count_include_pad ? -p0 : 0, hi = a.count_include_pad ? in + p1 : in;
          int64_t span = (k - 1) * dil + 1;
          int64_t last_end = (n_out - 1) * stride - p0 + span;  // end of the last window
          if (-p0 >= lo && last_end <= hi) return Expr(k);
          Expr start = detail::scaled(o, stride) - Expr(p0);
          if (dil == 1) {
            Expr end = last_end > hi ? te::min(start + Expr(k), Expr(hi)) : start + Expr(k);
            return end - (-p0 < lo ? te::max(start, Expr(lo)) : start);
          }
          // Taps j in [first, last] land in [lo, hi): start + j dil >= lo and < hi.
          Expr first = te::max(te::floordiv(Expr(lo + dil - 1) - start, Expr(dil)), Expr(0));
          Expr last = te::min(te::floordiv(Expr(hi - 1) - start, Expr(dil)), Expr(k - 1));
          return te::max(last - first + Expr(1), Expr(1));  // a window wholly in padding sums 0
        };
        Expr ch = count(ax[2], a.stride_h, a.kernel_h, a.dilation_h, h_in, a.pad_top, a.pad_bottom, out[2]);
        Expr cw = count(ax[3], a.stride_w, a.kernel_w, a.dilation_w, w_in, a.pad_left, a.pad_right, out[3]);
        return s(detail::exprs(ax)) / te::cast(data.dtype(), ch * cw);
      },
      name);
}

te::Tensor global_avg_pool(const te::Tensor& data, const std::string& name) {
  detail::check_float(data, name);
  USER_CHECK(data.ndim() == 4) << name << ": data must be NCHW (rank 4), got "
                               << te::shape_str(data.shape());
  const Shape& s = data.shape();
  Shape out = {s[0], s[1], 1, 1};
  te::Tensor total = te::compute(
      out,
      [&](const std::vector<Var>& ax) {
        te::IterVar rh = te::reduce_axis(s[2], "rh"), rw = te::reduce_axis(s[3], "rw");
        return te::sum(data(ax[0], ax[1], rh.var, rw.var), {rh, rw});
      },
      name + "_sum", "pool");
  return te::compute(
      out,
      [&](const std::vector<Var>& ax) {
        return total(detail::exprs(ax)) / te::make_const(data.dtype(), double(s[2] * s[3]));
      },
      name);
}

te::Tensor global_max_pool(const te::Tensor& data, const std::string& name) {
  detail::check_numeric(data, name);
  USER_CHECK(data.ndim() == 4) << name << ": data must be NCHW (rank 4), got "
                               << te::shape_str(data.shape());
  const Shape& s = data.shape();
  return te::compute(
      {s[0], s[1], 1, 1},
      [&](const std::vector<Var>& ax) {
        te::IterVar rh = te::reduce_axis(s[2], "rh"), rw = te::reduce_axis(s[3], "rw");
        return te::max_reduce(data(ax[0], ax[1], rh.var, rw.var), {rh, rw});
      },
      name, "pool");
}

}  // namespace tuner::ops
