#include "ops/winograd.h"

#include "ops/op_util.h"
#include "ops/transform.h"
#include "support/error.h"

namespace tuner::ops {

using te::Expr;
using te::Var;

namespace {

constexpr int64_t kM = kWinogradTile, kA = kWinogradAlpha;

// F(4x4, 3x3) with the interpolation points 0, 1, -1, 2, -2 and infinity.
constexpr double kBT[kA][kA] = {{4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0},
                                {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
constexpr double kG[kA][3] = {{1.0 / 4, 0, 0},
                              {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                              {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                              {1.0 / 24, 1.0 / 12, 1.0 / 6},
                              {1.0 / 24, -1.0 / 12, 1.0 / 6},
                              {0, 0, 1}};
constexpr double kAT[kM][kA] = {
    {1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}};

// sum_i coef[i] * x[i] over the non-zero coefficients, without multiplying by +-1.
template <size_t N>
Expr combine(const double (&coef)[N], const std::vector<Expr>& x, te::DataType t) {
  Expr s;
  for (size_t i = 0; i < N; ++i) {
    if (coef[i] == 0) continue;
    Expr term = coef[i] == 1 || coef[i] == -1 ? x[i] : te::make_const(t, coef[i]) * x[i];
    if (!s) s = coef[i] == -1 ? -term : term;
    else s = coef[i] == -1 ? s - term : s + term;
  }
  return s;
}

// if_then_else(k == 0, v[0], if_then_else(k == 1, v[1], ...)): lazy, so a schedule that
// keeps k a loop variable evaluates one branch; unrolled over k, the chain folds away.
Expr choose(const Expr& k, const std::vector<Expr>& v) {
  Expr r = v.back();
  for (size_t i = v.size() - 1; i-- > 0;) r = te::if_then_else(te::eq(k, Expr(int64_t(i))), v[i], r);
  return r;
}

}  // namespace

WinogradGeometry WinogradGeometry::make(const std::vector<int64_t>& nchw, std::array<int64_t, 4> pads) {
  INTERNAL_CHECK(nchw.size() == 4) << "winograd: NCHW data expected";
  WinogradGeometry g;
  g.n = nchw[0], g.c = nchw[1], g.h = nchw[2], g.w = nchw[3];
  g.pad_top = pads[0], g.pad_left = pads[1];
  g.out_h = g.h + pads[0] + pads[2] - 2;
  g.out_w = g.w + pads[1] + pads[3] - 2;
  USER_CHECK(g.out_h > 0 && g.out_w > 0)
      << "winograd: the 3x3 window does not fit the padded " << g.h + pads[0] + pads[2] << "x"
      << g.w + pads[1] + pads[3] << " input (the output would be empty)";
  g.tiles_h = ceil_div(g.out_h, kM);
  g.tiles_w = ceil_div(g.out_w, kM);
  g.row = g.tiles_w > 16 ? ceil_div(g.tiles_w, 16) * 16 : 1;
  while (g.row < g.tiles_w) g.row *= 2;
  g.tiles = g.n * g.tiles_h * g.row;
  return g;
}

te::Tensor winograd_input(const te::Tensor& data, const WinogradGeometry& g, const std::string& name) {
  detail::check_float(data, name);
  te::DataType t = data.dtype();
  // Zero-padded to whole rows of tiles first (a multiple of 16 wide, so that pass is
  // vectorized): the transform then reads without a border test, which as a branch would
  // keep LLVM from sharing the loads between the 36 formulas.
  int64_t bottom = g.tiles_h * kM + 2 - g.h - g.pad_top;
  int64_t right = (g.row * kM + 2 + 15) / 16 * 16 - g.w - g.pad_left;
  te::Tensor in = pad(data, {0, 0, g.pad_top, g.pad_left, 0, 0, bottom, right}, 0.0, name + "_pad");
  // The tiles' 36 elements as their own stage: the schedule keeps a row of tiles in
  // registers, so each element is loaded once for the 36 formulas that read it (LLVM does
  // not find the repeated loads across a body this long).
  te::Tensor tile = te::compute(
      {kA * kA, g.c, g.tiles},
      [&](const std::vector<Var>& ax) {
        Expr p = ax[2];
        Expr n = te::floordiv(p, Expr(g.tiles_h * g.row));
        Expr ty = te::floormod(te::floordiv(p, Expr(g.row)), Expr(g.tiles_h));
        Expr tx = te::floormod(p, Expr(g.row));
        Expr i = te::floordiv(ax[0], Expr(kA)), j = te::floormod(ax[0], Expr(kA));
        return in(n, ax[1], ty * Expr(kM) + i, tx * Expr(kM) + j);
      },
      name + "_tile", "winograd_tile");
  return te::compute(
      {kA * kA, g.c, g.tiles},
      [&](const std::vector<Var>& ax) {
        Expr e = ax[0], c = ax[1], p = ax[2];
        std::vector<std::vector<Expr>> d(kA);  // d[i][j]: the input tile
        for (int64_t i = 0; i < kA; ++i)
          for (int64_t j = 0; j < kA; ++j) d[size_t(i)].push_back(tile(Expr(i * kA + j), c, p));
        std::vector<Expr> out;
        for (int64_t a = 0; a < kA; ++a) {
          // Rows first (B^T d), shared by the six columns b of row a once unrolled.
          std::vector<Expr> rows;
          for (int64_t j = 0; j < kA; ++j) {
            std::vector<Expr> col;
            for (int64_t i = 0; i < kA; ++i) col.push_back(d[size_t(i)][size_t(j)]);
            rows.push_back(combine(kBT[a], col, t));
          }
          for (int64_t b = 0; b < kA; ++b) out.push_back(combine(kBT[b], rows, t));
        }
        return choose(e, out);
      },
      name, "winograd_input", {{"row", g.row}});
}

te::Tensor winograd_product(const te::Tensor& v, const te::Tensor& u, const std::string& name) {
  detail::check_same_dtype(v, u, name);
  USER_CHECK(v.ndim() == 3 && u.ndim() == 3 && v.shape()[0] == u.shape()[0] &&
             v.shape()[1] == u.shape()[1])
      << name << ": V [36, C, P] and U [36, C, K] expected, got " << te::shape_str(v.shape())
      << " and " << te::shape_str(u.shape());
  return te::compute(
      {v.shape()[0], v.shape()[2], u.shape()[2]},
      [&](const std::vector<Var>& ax) {
        te::IterVar c = te::reduce_axis(v.shape()[1], "c");
        return te::sum(v(ax[0], c.var, ax[1]) * u(ax[0], c.var, ax[2]), {c});
      },
      name, "matmul", {{"transpose_b", 0}});
}

te::Tensor winograd_output(const te::Tensor& m, const WinogradGeometry& g, const te::Tensor& bias,
                           const std::string& name) {
  detail::check_float(m, name);
  te::DataType t = m.dtype();
  USER_CHECK(m.ndim() == 3 && m.shape()[0] == kA * kA && m.shape()[1] == g.tiles)
      << name << ": products [36, " << g.tiles << ", K] expected, got " << te::shape_str(m.shape());
  int64_t k = m.shape()[2];
  return te::compute(
      {g.n, k, g.out_h, g.out_w},
      [&](const std::vector<Var>& ax) {
        Expr n = ax[0], kk = ax[1], h = ax[2], w = ax[3];
        Expr p = (n * Expr(g.tiles_h) + te::floordiv(h, Expr(kM))) * Expr(g.row) + te::floordiv(w, Expr(kM));
        Expr hi = te::floormod(h, Expr(kM)), wi = te::floormod(w, Expr(kM));
        std::vector<Expr> by_row;
        for (int64_t i = 0; i < kM; ++i) {
          std::vector<Expr> by_col;
          for (int64_t j = 0; j < kM; ++j) {
            // Columns first (M A), shared by the four output rows i once unrolled.
            std::vector<Expr> cols;
            for (int64_t a = 0; a < kA; ++a) {
              std::vector<Expr> mrow;
              for (int64_t b = 0; b < kA; ++b) mrow.push_back(m(Expr(a * kA + b), p, kk));
              cols.push_back(combine(kAT[j], mrow, t));
            }
            by_col.push_back(combine(kAT[i], cols, t));
          }
          by_row.push_back(choose(wi, by_col));
        }
        Expr y = choose(hi, by_row);
        return bias ? y + bias(kk) : y;
      },
      name, "winograd_output");
}

te::Tensor winograd_conv(const te::Tensor& data, const te::Tensor& u, const WinogradGeometry& g,
                         const te::Tensor& bias, const std::string& name) {
  te::Tensor v = winograd_input(data, g, name + "_v");
  return winograd_output(winograd_product(v, u, name + "_m"), g, bias, name);
}

HostTensor winograd_weight(const HostTensor& kcrs) {
  INTERNAL_CHECK(kcrs.shape.size() == 4 && kcrs.shape[2] == 3 && kcrs.shape[3] == 3 &&
                 kcrs.dtype == te::DataType::f32())
      << "winograd_weight: a float32 [K, C, 3, 3] weight expected";
  int64_t K = kcrs.shape[0], C = kcrs.shape[1];
  HostTensor u({kA * kA, C, K}, kcrs.dtype);
  const float* g = kcrs.data<float>();
  float* out = u.data<float>();
  for (int64_t k = 0; k < K; ++k)
    for (int64_t c = 0; c < C; ++c) {
      const float* w = g + (k * C + c) * 9;
      double gw[kA][3];  // G g
      for (int64_t a = 0; a < kA; ++a)
        for (int64_t s = 0; s < 3; ++s)
          gw[a][s] = kG[a][0] * w[0 * 3 + s] + kG[a][1] * w[1 * 3 + s] + kG[a][2] * w[2 * 3 + s];
      for (int64_t a = 0; a < kA; ++a)
        for (int64_t b = 0; b < kA; ++b) {
          double v = kG[b][0] * gw[a][0] + kG[b][1] * gw[a][1] + kG[b][2] * gw[a][2];
          out[((a * kA + b) * C + c) * K + k] = float(v);
        }
    }
  return u;
}

HostTensor winograd_input_ref(const HostTensor& data, const WinogradGeometry& g) {
  HostTensor v({kA * kA, g.c, g.tiles}, data.dtype);
  const float* x = data.data<float>();
  float* out = v.data<float>();
  for (int64_t p = 0; p < g.tiles; ++p) {
    int64_t n = p / (g.tiles_h * g.row), ty = p / g.row % g.tiles_h, tx = p % g.row;
    for (int64_t c = 0; c < g.c; ++c) {
      double d[kA][kA], bd[kA][kA];
      for (int64_t i = 0; i < kA; ++i)
        for (int64_t j = 0; j < kA; ++j) {
          int64_t r = ty * kM + i - g.pad_top, q = tx * kM + j - g.pad_left;
          bool in = r >= 0 && r < g.h && q >= 0 && q < g.w;
          d[i][j] = in ? x[((n * g.c + c) * g.h + r) * g.w + q] : 0.0;
        }
      for (int64_t a = 0; a < kA; ++a)
        for (int64_t j = 0; j < kA; ++j) {
          bd[a][j] = 0;
          for (int64_t i = 0; i < kA; ++i) bd[a][j] += kBT[a][i] * d[i][j];
        }
      for (int64_t a = 0; a < kA; ++a)
        for (int64_t b = 0; b < kA; ++b) {
          double s = 0;
          for (int64_t j = 0; j < kA; ++j) s += bd[a][j] * kBT[b][j];
          out[((a * kA + b) * g.c + c) * g.tiles + p] = float(s);
        }
    }
  }
  return v;
}

HostTensor winograd_product_ref(const HostTensor& v, const HostTensor& u) {
  int64_t E = v.shape[0], C = v.shape[1], P = v.shape[2], K = u.shape[2];
  HostTensor m({E, P, K}, v.dtype);
  const float* a = v.data<float>();
  const float* b = u.data<float>();
  float* out = m.data<float>();
  for (int64_t e = 0; e < E; ++e)
    for (int64_t p = 0; p < P; ++p)
      for (int64_t k = 0; k < K; ++k) {
        double s = 0;
        for (int64_t c = 0; c < C; ++c) s += double(a[(e * C + c) * P + p]) * b[(e * C + c) * K + k];
        out[(e * P + p) * K + k] = float(s);
      }
  return m;
}

HostTensor winograd_output_ref(const HostTensor& m, const WinogradGeometry& g, const HostTensor& bias) {
  int64_t K = m.shape[2];
  HostTensor y({g.n, K, g.out_h, g.out_w}, m.dtype);
  const float* in = m.data<float>();
  float* out = y.data<float>();
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t h = 0; h < g.out_h; ++h)
        for (int64_t w = 0; w < g.out_w; ++w) {
          int64_t p = (n * g.tiles_h + h / kM) * g.row + w / kM;
          double s = bias.defined() ? bias.data<float>()[k] : 0.0;
          for (int64_t a = 0; a < kA; ++a)
            for (int64_t b = 0; b < kA; ++b)
              s += kAT[h % kM][a] * kAT[w % kM][b] * in[((a * kA + b) * g.tiles + p) * K + k];
          out[((n * K + k) * g.out_h + h) * g.out_w + w] = float(s);
        }
  return y;
}

}  // namespace tuner::ops
