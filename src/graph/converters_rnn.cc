// Recurrent layers: RNN, GRU and LSTM, unrolled over the (static) sequence into te stages.
// The input projections of all time steps are one product per direction (X W^T); each step
// then adds its recurrent product H R^T and the biases and applies the gate formulas, one
// stage per state. Y is gathered from the steps' hidden states. With W and R as ONNX stores
// them ([gates x hidden, k]) the products are row reductions (vectorized over k: the matmul
// tiling would gather R a row apart); transposed by the pass pack_recurrent_weights
// (attribute tuner_weights_kn), or packed into column panels (tuner_weights_block), they are
// matrix products vectorized over the gate units.
#include <functional>

#include "graph/converters_impl.h"
#include "ops/elementwise.h"
#include "ops/op_util.h"
#include "ops/transform.h"

namespace tuner::graph::detail {

namespace {

using te::Expr;
using te::Var;
using Act = std::function<Expr(const Expr&)>;

// An activation by its ONNX name, with its alpha and beta (ops::scalar's formulas).
Act activation(const ConvertContext& c, const std::string& name, double alpha, double beta) {
  namespace sc = ops::scalar;
  if (name == "Sigmoid") return sc::sigmoid;
  if (name == "Tanh") return sc::tanh;
  if (name == "Relu") return sc::relu;
  if (name == "Softsign") return sc::softsign;
  if (name == "HardSigmoid") return [=](const Expr& v) { return sc::hardsigmoid(v, alpha, beta); };
  if (name == "LeakyRelu") return [=](const Expr& v) { return sc::leaky_relu(v, alpha); };
  c.fail("activation " + name +
         " is not supported (Sigmoid, Tanh, Relu, HardSigmoid, LeakyRelu, Softsign are)");
}

// What the three layers share: shapes, attributes, and the per-direction inputs.
struct Recurrent {
  const ConvertContext& c;
  int gates;  // RNN 1, GRU 3, LSTM 4
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1;
  bool reverse_only = false, batch_first = false;
  bool kn = false;     // W and R transposed: [dirs, k, gates x hidden]
  int64_t block = 0;  // and packed: [dirs, gates x hidden / block, k, block]
  te::Tensor x;  // [seq, batch, input]
  std::vector<Act> acts;
  double clip = 0;

  Recurrent(const ConvertContext& ctx, int g, int acts_per_dir, std::vector<std::string> default_acts)
      : c(ctx), gates(g) {
    std::string dir = c.attr_string("direction", "forward");
    if (dir == "bidirectional")
      dirs = 2;
    else if (dir == "reverse")
      reverse_only = true;
    else if (dir != "forward")
      c.fail("direction must be forward, reverse or bidirectional, got " + dir);
    batch_first = c.attr_int("layout", 0) == 1;
    x = c.input(0);
    if (x.ndim() != 3) c.fail("X must have 3 dimensions, got " + te::shape_str(x.shape()));
    if (batch_first) x = ops::transpose(x, {1, 0, 2}, c.name("x"));
    seq = x.shape()[0], batch = x.shape()[1], input = x.shape()[2];
    kn = c.attr_int("tuner_weights_kn", 0) != 0;
    block = kn ? c.attr_int("tuner_weights_block", 0) : 0;
    const ops::Shape& rs = c.input(2).shape();
    hidden = c.attr_int("hidden_size", block ? (rs.size() == 4 ? rs[2] : 0) : rs.size() == 3 ? rs[kn ? 1 : 2] : 0);
    int64_t gh = gates * hidden;
    if (block && (block < 0 || gh % block != 0))
      c.fail("tuner_weights_block " + std::to_string(block) + " does not divide " + std::to_string(gh));
    auto layout = [&](int64_t k) {
      return block ? ops::Shape{dirs, gh / block, k, block} : kn ? ops::Shape{dirs, k, gh} : ops::Shape{dirs, gh, k};
    };
    expect_shape(1, layout(input), "W");
    expect_shape(2, layout(hidden), "R");
    if (c.has_input(3)) expect_shape(3, {dirs, 2 * gates * hidden}, "B");
    if (c.has_input(4)) {
      for (int64_t n : c.constant_ints(4, "sequence_lens"))
        if (n != seq)
          c.fail("sequence_lens shorter than the sequence (" + std::to_string(n) + " < " +
                 std::to_string(seq) + ") is not supported");
    }
    if (c.has_input(5)) expect_shape(5, initial_shape(), "initial_h");
    clip = c.attr_float("clip", 0);
    std::vector<std::string> names = c.attr_strings("activations", {});
    std::vector<double> alpha = c.attr_floats("activation_alpha", {}),
                        beta = c.attr_floats("activation_beta", {});
    // alpha and beta are consumed in order by the activations that take them (as ONNX
    // Runtime reads them): HardSigmoid both, LeakyRelu alpha.
    size_t next_alpha = 0, next_beta = 0;
    for (int64_t d = 0; d < dirs; ++d)
      for (int a = 0; a < acts_per_dir; ++a) {
        size_t i = size_t(d * acts_per_dir + a);
        std::string n = i < names.size() ? names[i] : default_acts[size_t(a)];
        bool takes_alpha = n == "HardSigmoid" || n == "LeakyRelu", takes_beta = n == "HardSigmoid";
        double al = n == "LeakyRelu" ? 0.01 : 0.2, be = 0.5;  // the defaults
        if (takes_alpha && next_alpha < alpha.size()) al = alpha[next_alpha++];
        if (takes_beta && next_beta < beta.size()) be = beta[next_beta++];
        acts.push_back(activation(c, n, al, be));
      }
  }

  std::vector<int64_t> initial_shape() const {
    return batch_first ? ops::Shape{batch, dirs, hidden} : ops::Shape{dirs, batch, hidden};
  }

  void expect_shape(size_t i, const ops::Shape& want, const char* what) const {
    if (c.input(i).shape() != want)
      c.fail(std::string(what) + " must be " + te::shape_str(want) + ", got " +
             te::shape_str(c.input(i).shape()));
  }

  Expr clipped(const Expr& v) const {
    if (clip <= 0) return v;
    te::DataType t = v.type();
    return te::min(te::max(v, te::make_const(t, -clip)), te::make_const(t, clip));
  }

  // Time step s of direction d reads time t(d, s).
  int64_t time(int64_t d, int64_t s) const { return (d == 1 || reverse_only) ? seq - 1 - s : s; }

  // XW[t x batch + b, j] = sum_i X[t, b, i] W[d, j, i]: every step's input product at once,
  // one matrix (read by xw_at).
  te::Tensor projection(int64_t d) const {
    te::Tensor w = c.input(1);
    int64_t gh = gates * hidden, nb = batch;
    return product({seq * batch, gh}, input, c.name("xw" + std::to_string(d)), [&](const Expr& row, const Expr& i) {
      return nb == 1 ? x(row, Expr(0), i) : x(te::floordiv(row, Expr(nb)), te::floormod(row, Expr(nb)), i);
    }, [&](const Expr& j, const Expr& i) { return weight(w, d, j, i); });
  }

  // W or R of direction d at gate unit j (of gates x hidden) and input k, in its layout.
  Expr weight(const te::Tensor& w, int64_t d, const Expr& j, const Expr& k) const {
    if (block) return w(Expr(d), te::floordiv(j, Expr(block)), k, te::floormod(j, Expr(block)));
    return kn ? w(Expr(d), k, j) : w(Expr(d), j, k);
  }

  // out[row, j] = sum_k a(row, k) b(j, k): tagged matmul when the weights are [k, n] (kn).
  te::Tensor product(const ops::Shape& shape, int64_t k_extent, const std::string& name,
                     const std::function<Expr(const Expr&, const Expr&)>& a,
                     const std::function<Expr(const Expr&, const Expr&)>& b) const {
    auto body = [&](const std::vector<Var>& ax) {
      te::IterVar k = te::reduce_axis(k_extent, "k");
      return te::sum(a(ax[0], k.var) * b(ax[1], k.var), {k});
    };
    if (block) return te::compute(shape, body, name, "matmul", {{"transpose_b", 0}, {"b_block", block}});
    if (kn) return te::compute(shape, body, name, "matmul", {{"transpose_b", 0}});
    return te::compute(shape, body, name);
  }

  // The projection xw at time t, batch b, gate unit j.
  Expr xw_at(const te::Tensor& xw, int64_t t, const Expr& b, const Expr& j) const {
    return xw(batch == 1 ? Expr(t) : Expr(t * batch) + b, j);
  }

  // The initial state [batch, hidden] of direction d (zeros without input i).
  te::Tensor initial(size_t i, int64_t d, const char* tag) const {
    te::DataType t = x.dtype();
    if (!c.has_input(i))
      return te::compute(
          {batch, hidden}, [&](const std::vector<Var>&) { return te::make_const(t, 0); },
          c.name(tag + std::to_string(d)));
    te::Tensor s = c.input(i);
    bool bf = batch_first;
    return te::compute(
        {batch, hidden},
        [&](const std::vector<Var>& ax) { return bf ? s(ax[0], Expr(d), ax[1]) : s(Expr(d), ax[0], ax[1]); },
        c.name(tag + std::to_string(d)));
  }

  // HR[b, j] = sum_k H[b, k] R[d, j0 + j, k] for j < n.
  te::Tensor recurrent(const te::Tensor& hprev, int64_t d, int64_t j0, int64_t n,
                       const std::string& tag) const {
    te::Tensor r = c.input(2);
    return product({batch, n}, hidden, c.name(tag), [&](const Expr& b, const Expr& k) { return hprev(b, k); },
                   [&](const Expr& j, const Expr& k) { return weight(r, d, j + Expr(j0), k); });
  }

  // Gate k's pre-activation at (batch b, unit u) of step time t: x W + h R + Wb + Rb, from the
  // step's projection xw and recurrent product hr (both [.., gates x hidden]).
  Expr gate(const te::Tensor& xw, const te::Tensor& hr, int64_t d, int64_t t, int64_t k, const Expr& b,
            const Expr& u) const {
    Expr j = u + Expr(k * hidden);
    return xw_at(xw, t, b, j) + hr(b, j) + bias(d, 0, k, u) + bias(d, 1, k, u);
  }

  // Bias entry Wb (which = 0) or Rb (which = 1) of gate g at unit u, or 0 without B.
  Expr bias(int64_t d, int which, int64_t g, const Expr& u) const {
    if (!c.has_input(3)) return te::make_const(x.dtype(), 0);
    return c.input(3)(Expr(d), u + Expr((which * gates + g) * hidden));
  }

  // Y [seq, dirs, batch, hidden] (or [batch, seq, dirs, hidden]) from each direction's hidden
  // states by step; Y_h / Y_c [dirs, batch, hidden] from the last ones.
  te::Tensor gather_y(const std::vector<std::vector<te::Tensor>>& by_step) const {
    std::vector<te::Tensor> per_time;
    for (int64_t t = 0; t < seq; ++t) {
      std::vector<te::Tensor> dir_states;
      for (int64_t d = 0; d < dirs; ++d) {
        int64_t s = time(d, t);  // time() is its own inverse
        dir_states.push_back(ops::reshape(by_step[size_t(d)][size_t(s)], {1, 1, batch, hidden},
                                          c.name("y" + std::to_string(t) + "_" + std::to_string(d))));
      }
      per_time.push_back(dirs == 1 ? dir_states[0]
                                   : ops::concat(dir_states, 1, c.name("yt" + std::to_string(t))));
    }
    te::Tensor y = seq == 1 ? per_time[0] : ops::concat(per_time, 0, c.name("y"));
    return batch_first ? ops::transpose(y, {2, 0, 1, 3}, c.name("y_bf")) : y;
  }

  te::Tensor last(const std::vector<te::Tensor>& finals, const char* tag) const {
    std::vector<te::Tensor> parts;
    for (size_t d = 0; d < finals.size(); ++d)
      parts.push_back(
          ops::reshape(finals[d], {1, batch, hidden}, c.name(std::string(tag) + std::to_string(d))));
    te::Tensor out = parts.size() == 1 ? parts[0] : ops::concat(parts, 0, c.name(tag));
    return batch_first ? ops::transpose(out, {1, 0, 2}, c.name(std::string(tag) + "_bf")) : out;
  }
};

std::vector<ConvertOutput> rnn(const ConvertContext& c) {
  Recurrent r(c, 1, 1, {"Tanh"});
  std::vector<std::vector<te::Tensor>> states(size_t(r.dirs));
  std::vector<te::Tensor> finals;
  for (int64_t d = 0; d < r.dirs; ++d) {
    te::Tensor xw = r.projection(d);
    te::Tensor h = r.initial(5, d, "init_h");
    const Act& f = r.acts[size_t(d)];
    for (int64_t s = 0; s < r.seq; ++s) {
      int64_t t = r.time(d, s);
      std::string tag = std::to_string(d) + "_" + std::to_string(s);
      te::Tensor hr = r.recurrent(h, d, 0, r.hidden, "hr" + tag);
      h = te::compute(
          {r.batch, r.hidden},
          [&](const std::vector<Var>& ax) { return f(r.clipped(r.gate(xw, hr, d, t, 0, ax[0], ax[1]))); },
          c.name("h" + tag));
      states[size_t(d)].push_back(h);
    }
    finals.push_back(h);
  }
  return {r.gather_y(states), r.last(finals, "y_h")};
}

std::vector<ConvertOutput> gru(const ConvertContext& c) {
  Recurrent r(c, 3, 2, {"Sigmoid", "Tanh"});
  bool linear_before_reset = c.attr_int("linear_before_reset", 0) != 0;
  std::vector<std::vector<te::Tensor>> states(size_t(r.dirs));
  std::vector<te::Tensor> finals;
  int64_t H = r.hidden;
  for (int64_t d = 0; d < r.dirs; ++d) {
    te::Tensor xw = r.projection(d);
    te::Tensor h = r.initial(5, d, "init_h");
    const Act &f = r.acts[size_t(2 * d)], &g = r.acts[size_t(2 * d + 1)];
    for (int64_t s = 0; s < r.seq; ++s) {
      int64_t t = r.time(d, s);
      std::string tag = std::to_string(d) + "_" + std::to_string(s);
      // Gates z, r, h (ONNX order): z and r from one recurrent product.
      te::Tensor hzr = r.recurrent(h, d, 0, (linear_before_reset ? 3 : 2) * H, "hzr" + tag);
      auto pre = [&](int64_t k, const Expr& b, const Expr& u) { return r.gate(xw, hzr, d, t, k, b, u); };
      te::Tensor hh;
      if (linear_before_reset) {
        hh = te::compute(
            {r.batch, H},
            [&](const std::vector<Var>& ax) {
              Expr rt = f(r.clipped(pre(1, ax[0], ax[1])));
              Expr lin = hzr(ax[0], ax[1] + Expr(2 * H)) + r.bias(d, 1, 2, ax[1]);
              return g(
                  r.clipped(r.xw_at(xw, t, ax[0], ax[1] + Expr(2 * H)) + r.bias(d, 0, 2, ax[1]) + rt * lin));
            },
            c.name("hh" + tag));
      } else {
        te::Tensor hprev = h;
        te::Tensor rh = te::compute(
            {r.batch, H},
            [&](const std::vector<Var>& ax) {
              return f(r.clipped(pre(1, ax[0], ax[1]))) * hprev(ax[0], ax[1]);
            },
            c.name("rh" + tag));
        te::Tensor rhr = r.recurrent(rh, d, 2 * H, H, "rhr" + tag);
        hh = te::compute(
            {r.batch, H},
            [&](const std::vector<Var>& ax) {
              return g(r.clipped(r.xw_at(xw, t, ax[0], ax[1] + Expr(2 * H)) + rhr(ax[0], ax[1]) +
                                 r.bias(d, 0, 2, ax[1]) + r.bias(d, 1, 2, ax[1])));
            },
            c.name("hh" + tag));
      }
      te::Tensor hprev = h;
      h = te::compute(
          {r.batch, H},
          [&](const std::vector<Var>& ax) {
            Expr z = f(r.clipped(pre(0, ax[0], ax[1])));
            return (te::make_const(z.type(), 1) - z) * hh(ax[0], ax[1]) + z * hprev(ax[0], ax[1]);
          },
          c.name("h" + tag));
      states[size_t(d)].push_back(h);
    }
    finals.push_back(h);
  }
  return {r.gather_y(states), r.last(finals, "y_h")};
}

std::vector<ConvertOutput> lstm(const ConvertContext& c) {
  Recurrent r(c, 4, 3, {"Sigmoid", "Tanh", "Tanh"});
  if (c.attr_int("input_forget", 0) != 0) c.fail("input_forget = 1 is not supported");
  if (c.has_input(6)) r.expect_shape(6, r.initial_shape(), "initial_c");
  if (c.has_input(7)) r.expect_shape(7, {r.dirs, 3 * r.hidden}, "P");
  std::vector<std::vector<te::Tensor>> states(size_t(r.dirs));
  std::vector<te::Tensor> finals_h, finals_c;
  int64_t H = r.hidden;
  for (int64_t d = 0; d < r.dirs; ++d) {
    te::Tensor xw = r.projection(d);
    te::Tensor h = r.initial(5, d, "init_h"), cell = r.initial(6, d, "init_c");
    const Act &f = r.acts[size_t(3 * d)], &g = r.acts[size_t(3 * d + 1)], &hact = r.acts[size_t(3 * d + 2)];
    auto peephole = [&](int64_t k, const Expr& u, const Expr& state) {  // P = [p_i, p_o, p_f]
      if (!c.has_input(7)) return te::make_const(r.x.dtype(), 0);
      return c.input(7)(Expr(d), u + Expr(k * H)) * state;
    };
    for (int64_t s = 0; s < r.seq; ++s) {
      int64_t t = r.time(d, s);
      std::string tag = std::to_string(d) + "_" + std::to_string(s);
      te::Tensor hr = r.recurrent(h, d, 0, 4 * H, "hr" + tag);
      // Gates i, o, f, c (ONNX order).
      auto pre = [&](int64_t k, const Expr& b, const Expr& u) { return r.gate(xw, hr, d, t, k, b, u); };
      te::Tensor cprev = cell;
      cell = te::compute(
          {r.batch, H},
          [&](const std::vector<Var>& ax) {
            Expr cp = cprev(ax[0], ax[1]);
            Expr i = f(r.clipped(pre(0, ax[0], ax[1]) + peephole(0, ax[1], cp)));
            Expr fg = f(r.clipped(pre(2, ax[0], ax[1]) + peephole(2, ax[1], cp)));
            return fg * cp + i * g(r.clipped(pre(3, ax[0], ax[1])));
          },
          c.name("c" + tag));
      te::Tensor cnew = cell;
      h = te::compute(
          {r.batch, H},
          [&](const std::vector<Var>& ax) {
            Expr cn = cnew(ax[0], ax[1]);
            Expr o = f(r.clipped(pre(1, ax[0], ax[1]) + peephole(1, ax[1], cn)));
            return o * hact(cn);
          },
          c.name("h" + tag));
      states[size_t(d)].push_back(h);
    }
    finals_h.push_back(h);
    finals_c.push_back(cell);
  }
  return {r.gather_y(states), r.last(finals_h, "y_h"), r.last(finals_c, "y_c")};
}

}  // namespace

void add_rnn_converters(std::vector<Converter>& out) {
  out.push_back({"RNN", rnn, {4}, HalfInputs::kInFloat32});
  out.push_back({"GRU", gru, {4}, HalfInputs::kInFloat32});
  out.push_back({"LSTM", lstm, {4}, HalfInputs::kInFloat32});
}

}  // namespace tuner::graph::detail
