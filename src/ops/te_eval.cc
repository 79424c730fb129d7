#include "ops/te_eval.h"

#include <cmath>
#include <unordered_map>

#include "te/float_minmax.h"
#include "te/functor.h"

namespace tuner::ops {

using namespace te;

namespace {

// A scalar value: `f` for float types, `i` for integers and bools (the node's type says which).
struct Value {
  double f = 0;
  int64_t i = 0;
};

// Wraps an int64 result to the width of t (two's complement), bools to 0/1.
int64_t wrap(int64_t v, DataType t) {
  if (t.is_bool()) return v != 0;
  if (t.bits >= 64) return v;
  uint64_t mask = (uint64_t(1) << t.bits) - 1, u = uint64_t(v) & mask;
  if (t.is_uint()) return int64_t(u);
  uint64_t sign = uint64_t(1) << (t.bits - 1);
  return int64_t((u ^ sign) - sign);
}

// Rounds a result to the precision of t: float16 and float32 compute in float, float64 in
// double, as the compiled kernels do.
double round_to(double v, DataType t) {
  if (t.bits == 64) return v;
  if (t.bits == 16) return double(half_to_float(float_to_half(float(v))));
  return double(float(v));
}

// op(a, b) in t's precision, rounded to it.
template <typename F>
double in_precision(DataType t, double a, double b, F op) {
  return t.bits == 64 ? op(a, b) : round_to(op(float(a), float(b)), t);
}

// Float -> int64 truncating toward zero, saturating (NaN -> 0).
int64_t trunc_to_int(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2233720368547758e18) return INT64_MAX;
  if (v <= -9.2233720368547758e18) return INT64_MIN;
  return int64_t(v);
}

int64_t floor_div(int64_t a, int64_t b) {
  INTERNAL_CHECK(b != 0) << "integer division by zero in a compute definition";
  if (b == -1) return int64_t(0 - uint64_t(a));  // INT64_MIN / -1 traps; wrap as compiled code does
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

class Evaluator : public ExprFunctor<Value(const Expr&)> {
 public:
  explicit Evaluator(const std::unordered_map<const OperationNode*, const HostTensor*>& tensors)
      : tensors_(tensors) {}

  // Evaluates compute op `op` into a new tensor.
  HostTensor run(const OperationNode& op) {
    HostTensor out(op.shape, op.dtype);
    env_.clear();
    for (auto& iv : op.axes) env_.push_back({iv.var.get(), 0});
    auto* red = op.body.as<ReduceNode>();
    Value identity;
    if (red) {
      for (auto& iv : red->axes) env_.push_back({iv.var.get(), 0});
      identity = (*this)(reduce_identity(red->combiner, red->type));
    }
    int64_t flat = 0;
    for_each_index(op.shape, [&](const std::vector<int64_t>& idx) {
      for (size_t d = 0; d < idx.size(); ++d) env_[d].second = idx[d];
      Value v = red ? reduce(*red, op.axes.size(), identity) : (*this)(op.body);
      if (op.dtype.is_float()) out.set(flat, v.f);
      else out.set_int(flat, v.i);
      ++flat;
    });
    return out;
  }

 private:
  // Combines r.source over its axes, whose variables are env_[first...].
  Value reduce(const ReduceNode& r, size_t first, Value acc) {
    DataType t = r.type;
    std::vector<int64_t> extents;
    for (auto& iv : r.axes) extents.push_back(iv.extent);
    for_each_index(extents, [&](const std::vector<int64_t>& k) {
      for (size_t j = 0; j < k.size(); ++j) env_[first + j].second = k[j];
      Value v = (*this)(r.source);
      if (t.is_float()) {
        acc.f = in_precision(t, acc.f, v.f,
                             [&](auto a, auto b) { return combine(r.combiner, a, b); });
      } else {
        int64_t a = acc.i, b = v.i, c = 0;
        switch (r.combiner) {
          case ReduceKind::Sum: c = int64_t(uint64_t(a) + uint64_t(b)); break;
          case ReduceKind::Prod: c = int64_t(uint64_t(a) * uint64_t(b)); break;
          case ReduceKind::Max: c = std::max(a, b); break;
          case ReduceKind::Min: c = std::min(a, b); break;
        }
        acc.i = wrap(c, t);
      }
    });
    return acc;
  }

  template <typename T>
  static T combine(ReduceKind k, T a, T b) {
    switch (k) {
      case ReduceKind::Sum: return a + b;
      case ReduceKind::Prod: return a * b;
      case ReduceKind::Max: return nan_max(a, b);
      case ReduceKind::Min: return nan_min(a, b);
    }
    return a;
  }

  template <typename T>
  static T arith(NodeKind k, T x, T y, DataType out) {
    switch (k) {
      case NodeKind::Add: return x + y;
      case NodeKind::Sub: return x - y;
      case NodeKind::Mul: return x * y;
      case NodeKind::Div: return x / y;
      case NodeKind::Min: return nan_min(x, y);
      case NodeKind::Max: return nan_max(x, y);
      default: INTERNAL_CHECK(false) << kind_name(k) << " on " << out.str();
    }
    return x;
  }

  Value visit_IntImm(const IntImmNode* op, const Expr&) override { return {0, op->value}; }
  Value visit_FloatImm(const FloatImmNode* op, const Expr&) override {
    return {round_to(op->value, op->type), 0};
  }
  Value visit_Var(const VarNode* op, const Expr&) override {
    for (auto it = env_.rbegin(); it != env_.rend(); ++it)
      if (it->first == op) return {0, it->second};
    INTERNAL_CHECK(false) << "unbound variable " << op->name;
  }

#define TUNER_BINARY(T, sym)                                      \
  Value visit_##T(const T##Node* op, const Expr& e) override {   \
    return binary(NodeKind::T, (*this)(op->a), (*this)(op->b), op->a.type(), e.type()); \
  }
#include "te/IRNodes.def"

  Value binary(NodeKind k, Value a, Value b, DataType in, DataType out) {
    if (is_comparison(k)) {
      bool r = false;
      if (in.is_float()) {
        double x = a.f, y = b.f;  // exact: each holds a value of its type
        r = k == NodeKind::EQ ? x == y : k == NodeKind::NE ? x != y : k == NodeKind::LT ? x < y
          : k == NodeKind::LE ? x <= y : k == NodeKind::GT ? x > y : x >= y;
      } else {
        int64_t x = a.i, y = b.i;
        r = k == NodeKind::EQ ? x == y : k == NodeKind::NE ? x != y : k == NodeKind::LT ? x < y
          : k == NodeKind::LE ? x <= y : k == NodeKind::GT ? x > y : x >= y;
      }
      return {0, r};
    }
    if (out.is_float()) {
      return {in_precision(out, a.f, b.f, [&](auto x, auto y) { return arith(k, x, y, out); }), 0};
    }
    int64_t x = a.i, y = b.i, r = 0;
    switch (k) {
      case NodeKind::Add: r = int64_t(uint64_t(x) + uint64_t(y)); break;
      case NodeKind::Sub: r = int64_t(uint64_t(x) - uint64_t(y)); break;
      case NodeKind::Mul: r = int64_t(uint64_t(x) * uint64_t(y)); break;
      case NodeKind::FloorDiv: r = floor_div(x, y); break;
      case NodeKind::FloorMod:  // without x - floor(x / y) * y, which can overflow
        INTERNAL_CHECK(y != 0) << "integer modulo by zero in a compute definition";
        r = y == -1 ? 0 : x % y;
        if (r != 0 && (r < 0) != (y < 0)) r += y;
        break;
      case NodeKind::Min: r = std::min(x, y); break;
      case NodeKind::Max: r = std::max(x, y); break;
      case NodeKind::And: r = x && y; break;
      case NodeKind::Or: r = x || y; break;
      default: INTERNAL_CHECK(false) << kind_name(k) << " on " << out.str();
    }
    return {0, wrap(r, out)};
  }

  Value visit_Not(const NotNode* op, const Expr&) override { return {0, !(*this)(op->a).i}; }

  Value visit_Select(const SelectNode* op, const Expr&) override {
    // Both sides are evaluated, as compiled code may: an unsafe read shows up as an error.
    Value c = (*this)(op->cond), t = (*this)(op->t), f = (*this)(op->f);
    return c.i ? t : f;
  }

  Value visit_Cast(const CastNode* op, const Expr&) override {
    DataType from = op->value.type(), to = op->type;
    Value v = (*this)(op->value);
    // An integer goes to float32 or float16 in one rounding (through double could be two).
    if (to.is_float()) {
      double x = from.is_float() ? v.f : to.bits == 64 ? double(v.i) : double(float(v.i));
      return {round_to(x, to), 0};
    }
    if (to.is_bool()) return {0, from.is_float() ? v.f != 0 : v.i != 0};
    return {0, wrap(from.is_float() ? float_to_int(v.f, to) : v.i, to)};
  }

  // Out of range the cast is undefined (ONNX, LLVM's fptosi); a signed result follows x86's
  // conversion, as compiled kernels and ONNX Runtime there do: through 32 (or 64) bits, where
  // NaN and values out of range are the most negative number (was 1e10 -> 1410065408 folded,
  // INT_MIN compiled).
  static int64_t float_to_int(double v, DataType to) {
    if (to.is_uint()) return trunc_to_int(v);
    if (to.bits > 32) return std::isnan(v) || v >= 9.2233720368547758e18 ? INT64_MIN : trunc_to_int(v);
    return std::isnan(v) || v >= 2147483648.0 || v <= -2147483649.0 ? INT32_MIN : trunc_to_int(v);
  }

  Value visit_Call(const CallNode* op, const Expr& e) override {
    if (op->op == Intrinsic::IfThenElse)  // lazy: only the branch taken
      return (*this)(op->args[0]).i ? (*this)(op->args[1]) : (*this)(op->args[2]);
    if (op->op == Intrinsic::DotU8S8x4) return {0, dot_u8s8x4((*this)(op->args[0]).i, (*this)(op->args[1]).i)};
    double x = (*this)(op->args[0]).f;
    double y = op->args.size() > 1 ? (*this)(op->args[1]).f : 0;
    return {in_precision(e.type(), x, y, [&](auto a, auto b) { return math(op->op, a, b); }), 0};
  }

  static int64_t dot_u8s8x4(int64_t a, int64_t b) {
    int64_t sum = 0;
    for (int j = 0; j < 4; ++j)
      sum += int64_t(uint8_t(uint64_t(a) >> (8 * j))) * int64_t(int8_t(uint8_t(uint64_t(b) >> (8 * j))));
    return sum;
  }

  template <typename T>
  static T math(Intrinsic op, T x, T y) {
    switch (op) {
      case Intrinsic::Exp: return std::exp(x);
      case Intrinsic::Log: return std::log(x);
      case Intrinsic::Sqrt: return std::sqrt(x);
      case Intrinsic::Rsqrt: return T(1) / std::sqrt(x);
      case Intrinsic::Tanh: return std::tanh(x);
      case Intrinsic::Erf: return std::erf(x);
      case Intrinsic::Sigmoid: return T(1) / (T(1) + std::exp(-x));
      case Intrinsic::Pow: return std::pow(x, y);
      case Intrinsic::Fabs: return std::fabs(x);
      case Intrinsic::Floor: return std::floor(x);
      case Intrinsic::Ceil: return std::ceil(x);
      case Intrinsic::Round: return std::round(x);
      case Intrinsic::IfThenElse: break;
      case Intrinsic::Sin: return std::sin(x);
      case Intrinsic::Cos: return std::cos(x);
      case Intrinsic::Tan: return std::tan(x);
      case Intrinsic::Asin: return std::asin(x);
      case Intrinsic::Acos: return std::acos(x);
      case Intrinsic::Atan: return std::atan(x);
      case Intrinsic::Sinh: return std::sinh(x);
      case Intrinsic::Cosh: return std::cosh(x);
      case Intrinsic::Asinh: return std::asinh(x);
      case Intrinsic::Acosh: return std::acosh(x);
      case Intrinsic::Atanh: return std::atanh(x);
      case Intrinsic::RoundEven: return std::nearbyint(x);  // the default mode: halves to even
      case Intrinsic::Fmod: return std::fmod(x, y);
      case Intrinsic::DotU8S8x4: break;
    }
    return 0;
  }

  Value visit_TensorRead(const TensorReadNode* op, const Expr&) override {
    auto it = tensors_.find(op->tensor.get());
    INTERNAL_CHECK(it != tensors_.end())
        << "tensor " << op->tensor.name() << " read before it is computed";
    const HostTensor& t = *it->second;
    int64_t flat = 0;
    for (size_t d = 0; d < op->indices.size(); ++d) {
      int64_t i = (*this)(op->indices[d]).i;
      INTERNAL_CHECK(i >= 0 && i < t.shape[d])
          << "out-of-bounds read of " << op->tensor.name() << " (shape " << shape_str(t.shape)
          << "): index " << i << " in dimension " << d;
      flat = flat * t.shape[d] + i;
    }
    if (t.dtype.is_float()) return {t.get(flat), 0};
    return {0, t.get_int(flat)};
  }

  Value visit_Reduce(const ReduceNode*, const Expr&) override {
    INTERNAL_CHECK(false) << "a reduction that is not the whole body of its op";
  }

  Value visit_default(const Expr& e) override {
    INTERNAL_CHECK(false) << "te_eval: " << kind_name(e.kind()) << " is not a te expression";
  }

  const std::unordered_map<const OperationNode*, const HostTensor*>& tensors_;
  std::vector<std::pair<const VarNode*, int64_t>> env_;
};

}  // namespace

std::vector<HostTensor> evaluate_all_ops(const ComputeDAG& dag,
                                         const std::vector<HostTensor>& inputs) {
  USER_CHECK(inputs.size() == dag.inputs().size())
      << "evaluate_dag: " << inputs.size() << " inputs given, the DAG has " << dag.inputs().size();
  std::unordered_map<const OperationNode*, const HostTensor*> tensors;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& p = dag.inputs()[i];
    USER_CHECK(inputs[i].shape == p.shape() && inputs[i].dtype == p.dtype())
        << "evaluate_dag: input " << i << " (" << p.name() << ") must be " << p.dtype().str()
        << "[" << shape_str(p.shape()) << "], got " << inputs[i].dtype.str() << "["
        << shape_str(inputs[i].shape) << "]";
    tensors[p.get()] = &inputs[i];
  }
  // Reserve so that pointers into `all` stay valid while it grows.
  std::vector<HostTensor> all;
  all.reserve(dag.ops().size());
  Evaluator ev(tensors);
  for (auto& op : dag.ops()) {
    if (op->is_placeholder) {
      all.push_back(*tensors.at(op.get()));
    } else {
      all.push_back(ev.run(*op));
      tensors[op.get()] = &all.back();
    }
  }
  return all;
}

std::vector<HostTensor> evaluate_dag(const ComputeDAG& dag, const std::vector<HostTensor>& inputs) {
  std::vector<HostTensor> all = evaluate_all_ops(dag, inputs);
  std::vector<HostTensor> out;
  for (auto& t : dag.outputs())
    for (size_t i = 0; i < dag.ops().size(); ++i)
      if (dag.ops()[i].get() == t.get()) out.push_back(all[i]);
  return out;
}

}  // namespace tuner::ops
