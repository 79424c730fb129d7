// Registry entries of the element-wise ops.
#include <cmath>

#include "ops/elementwise.h"
#include "ops/reference.h"
#include "ops/registry_impl.h"

namespace tuner::ops::detail {

namespace {

using te::ComputeDAG;
using ref::BinaryOp;
using ref::UnaryOp;

struct UnaryEntry {
  const char* name;
  const char* help;
  UnaryOp op;
  // The op's float parameters (name, default) and te builder.
  std::vector<OpParam> extra;
  std::function<te::Tensor(const te::Tensor&, double, double)> fn;
  double lo = -3, hi = 3;  // input range
};

std::vector<UnaryEntry> unary_entries() {
  using T = te::Tensor;
  return {
      {"relu", "max(x, 0)", UnaryOp::Relu, {}, [](const T& x, double, double) { return relu(x); }},
      {"clip", "min(max(x, min), max)", UnaryOp::Clip,
       {{"min", "0", "lower bound"}, {"max", "6", "upper bound"}},
       [](const T& x, double a, double b) { return clip(x, a, b); }, -8, 8},
      {"sigmoid", "1 / (1 + exp(-x))", UnaryOp::Sigmoid, {},
       [](const T& x, double, double) { return sigmoid(x); }, -8, 8},
      {"tanh", "tanh(x)", UnaryOp::Tanh, {}, [](const T& x, double, double) { return tanh(x); }},
      {"exp", "exp(x)", UnaryOp::Exp, {}, [](const T& x, double, double) { return exp(x); }},
      {"log", "natural log (inputs in [0.1, 4])", UnaryOp::Log, {},
       [](const T& x, double, double) { return log(x); }, 0.1, 4},
      {"sqrt", "square root (inputs in [0, 4])", UnaryOp::Sqrt, {},
       [](const T& x, double, double) { return sqrt(x); }, 0, 4},
      {"erf", "error function", UnaryOp::Erf, {},
       [](const T& x, double, double) { return erf(x); }},
      {"gelu", "0.5 x (1 + erf(x / sqrt 2))", UnaryOp::Gelu, {},
       [](const T& x, double, double) { return gelu(x); }},
      {"silu", "x * sigmoid(x)", UnaryOp::Silu, {},
       [](const T& x, double, double) { return silu(x); }},
      {"hardswish", "x * min(max(x + 3, 0), 6) / 6", UnaryOp::Hardswish, {},
       [](const T& x, double, double) { return hardswish(x); }, -5, 5},
      {"hardsigmoid", "max(0, min(1, alpha x + beta))", UnaryOp::Hardsigmoid,
       {{"alpha", "0.2", "slope"}, {"beta", "0.5", "offset"}},
       [](const T& x, double a, double b) { return hardsigmoid(x, a, b); }, -5, 5},
      {"leaky_relu", "x if x >= 0 else alpha x", UnaryOp::LeakyRelu,
       {{"alpha", "0.01", "slope below 0"}},
       [](const T& x, double a, double) { return leaky_relu(x, a); }},
      {"neg", "-x", UnaryOp::Neg, {}, [](const T& x, double, double) { return neg(x); }},
      {"abs", "|x|", UnaryOp::Abs, {}, [](const T& x, double, double) { return abs(x); }},
  };
}

// The two float parameters of a unary op (0 when it has none).
std::pair<double, double> unary_args(const UnaryEntry& e, const Params& p) {
  double a = e.extra.size() > 0 ? p.get_float(e.extra[0].name) : 0;
  double b = e.extra.size() > 1 ? p.get_float(e.extra[1].name) : 0;
  return {a, b};
}

OpDef unary_op(const UnaryEntry& e) {
  OpDef d;
  d.name = e.name;
  d.help = e.help;
  d.params = {{"shape", "", "tensor shape, e.g. 4x16"}};
  d.params.insert(d.params.end(), e.extra.begin(), e.extra.end());
  d.params.push_back(dtype_param());
  d.build = [e](const Params& p) {
    te::Tensor x = te::placeholder(p.get_shape("shape"), p.get_dtype("dtype"), "x");
    auto [a, b] = unary_args(e, p);
    return ComputeDAG({x}, {e.fn(x, a, b)});
  };
  d.reference = [e](const Params& p, const std::vector<HostTensor>& in) {
    auto [a, b] = unary_args(e, p);
    return std::vector<HostTensor>{ref::unary(in[0], e.op, a, b)};
  };
  d.make_inputs = [e](const Params&, const ComputeDAG& dag, uint64_t seed) {
    return random_inputs(dag, seed, e.lo, e.hi);
  };
  return d;
}

struct BinaryEntry {
  const char* name;
  const char* help;
  BinaryOp op;
  te::Tensor (*fn)(const te::Tensor&, const te::Tensor&, const std::string&);
};

OpDef binary_op(const BinaryEntry& e) {
  OpDef d;
  d.name = e.name;
  d.help = std::string(e.help) + " (numpy broadcasting)";
  d.params = {{"a", "", "shape of a, e.g. 4x16"}, {"b", "", "shape of b, e.g. 16 or 4x1"},
              dtype_param()};
  d.build = [e](const Params& p) {
    te::DataType dt = p.get_dtype("dtype");
    te::Tensor a = te::placeholder(p.get_shape("a"), dt, "a");
    te::Tensor b = te::placeholder(p.get_shape("b"), dt, "b");
    return ComputeDAG({a, b}, {e.fn(a, b, e.name)});
  };
  d.reference = [e](const Params&, const std::vector<HostTensor>& in) {
    return std::vector<HostTensor>{ref::binary(in[0], in[1], e.op)};
  };
  d.make_inputs = [e](const Params&, const ComputeDAG& dag, uint64_t seed) {
    if (e.op == BinaryOp::Pow) {  // positive bases, moderate exponents
      Rng rng(seed);
      return std::vector<HostTensor>{
          HostTensor::random(dag.inputs()[0].shape(), dag.inputs()[0].dtype(), rng, 0.5, 2),
          HostTensor::random(dag.inputs()[1].shape(), dag.inputs()[1].dtype(), rng, -2, 2)};
    }
    std::vector<HostTensor> in = random_inputs(dag, seed);
    if (e.op == BinaryOp::Div) {  // keep divisors away from 0
      Rng rng(seed ^ 0x5eed);
      in[1] = HostTensor::random(in[1].shape, in[1].dtype, rng, 0.5, 2);
    }
    if (e.op == BinaryOp::Equal) {  // make some elements equal
      for (int64_t i = 0; i < in[1].num_elements(); i += 2)
        in[1].set(i, in[0].get(i % in[0].num_elements()));
    }
    return in;
  };
  return d;
}

}  // namespace

void add_elementwise_ops(std::vector<OpDef>& ops) {
  for (auto& e : unary_entries()) ops.push_back(unary_op(e));
  for (const BinaryEntry& e : std::vector<BinaryEntry>{
           {"add", "a + b", BinaryOp::Add, add},
           {"sub", "a - b", BinaryOp::Sub, sub},
           {"mul", "a * b", BinaryOp::Mul, mul},
           {"div", "a / b", BinaryOp::Div, div},
           {"pow", "a ** b", BinaryOp::Pow, pow},
           {"maximum", "max(a, b)", BinaryOp::Maximum, maximum},
           {"minimum", "min(a, b)", BinaryOp::Minimum, minimum},
           {"equal", "a == b -> bool", BinaryOp::Equal, equal},
           {"less", "a < b -> bool", BinaryOp::Less, less},
           {"greater", "a > b -> bool", BinaryOp::Greater, greater},
       })
    ops.push_back(binary_op(e));

  OpDef w;
  w.name = "where";
  w.help = "cond ? a : b (numpy broadcasting)";
  w.params = {{"cond", "", "shape of the bool condition"},
              {"a", "", "shape of a"},
              {"b", "", "shape of b"},
              dtype_param()};
  w.build = [](const Params& p) {
    te::DataType dt = p.get_dtype("dtype");
    te::Tensor c = te::placeholder(p.get_shape("cond"), te::DataType::boolean(), "cond");
    te::Tensor a = te::placeholder(p.get_shape("a"), dt, "a");
    te::Tensor b = te::placeholder(p.get_shape("b"), dt, "b");
    return ComputeDAG({c, a, b}, {where(c, a, b)});
  };
  w.reference = [](const Params&, const std::vector<HostTensor>& in) {
    return std::vector<HostTensor>{ref::where(in[0], in[1], in[2])};
  };
  w.make_inputs = [](const Params&, const ComputeDAG& dag, uint64_t seed) {
    return random_inputs(dag, seed);
  };
  ops.push_back(w);

  OpDef c;
  c.name = "cast";
  c.help = "dtype conversion (float -> int truncates toward zero)";
  c.params = {{"shape", "", "tensor shape"},
              {"from", "float32", "input dtype"},
              {"to", "int32", "output dtype"}};
  c.build = [](const Params& p) {
    te::Tensor x = te::placeholder(p.get_shape("shape"), p.get_dtype("from"), "x");
    return ComputeDAG({x}, {cast(x, p.get_dtype("to"))});
  };
  c.reference = [](const Params& p, const std::vector<HostTensor>& in) {
    return std::vector<HostTensor>{ref::cast(in[0], p.get_dtype("to"))};
  };
  c.make_inputs = [](const Params& p, const ComputeDAG& dag, uint64_t seed) {
    // Values that fit the target type, so that the conversion is defined everywhere.
    te::DataType to = p.get_dtype("to");
    double lo = to.is_uint() || to.is_bool() ? 0 : -100, hi = to.is_bool() ? 1.5 : 100;
    return random_inputs(dag, seed, lo, hi, int64_t(std::ceil(lo)), int64_t(hi));
  };
  ops.push_back(c);
}

}  // namespace tuner::ops::detail
