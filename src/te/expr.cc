#include "te/expr.h"

#include <algorithm>

#include <cmath>
#include <limits>

#include "support/error.h"
#include "te/tensor.h"

namespace tuner::te {

std::string DataType::str() const {
  std::string s;
  switch (code) {
    case Int: s = "int" + std::to_string(bits); break;
    case UInt: s = "uint" + std::to_string(bits); break;
    case Float: s = "float" + std::to_string(bits); break;
    case Bool: s = "bool"; break;
    case Handle: s = "handle"; break;
  }
  if (lanes > 1) s += "x" + std::to_string(lanes);
  return s;
}

DataType DataType::parse(const std::string& s) {
  for (DataType t : {f32(), f16(), i64(), i32(), i8(), u8(), boolean()})
    if (t.str() == s) return t;
  USER_ERROR() << "unknown dtype '" << s
               << "' (expected float32, float16, int64, int32, int8, uint8 or bool)";
}

const char* kind_name(NodeKind k) {
  switch (k) {
#define TUNER_EXPR(T) \
  case NodeKind::T: return #T;
#define TUNER_STMT(T) \
  case NodeKind::T: return #T;
#include "te/IRNodes.def"
  }
  return "?";
}

bool is_comparison(NodeKind k) {
  return k == NodeKind::EQ || k == NodeKind::NE || k == NodeKind::LT || k == NodeKind::LE ||
         k == NodeKind::GT || k == NodeKind::GE;
}

const char* intrinsic_name(Intrinsic op) {
  switch (op) {
    case Intrinsic::Exp: return "exp";
    case Intrinsic::Log: return "log";
    case Intrinsic::Sqrt: return "sqrt";
    case Intrinsic::Rsqrt: return "rsqrt";
    case Intrinsic::Tanh: return "tanh";
    case Intrinsic::Erf: return "erf";
    case Intrinsic::Sigmoid: return "sigmoid";
    case Intrinsic::Pow: return "pow";
    case Intrinsic::Fabs: return "fabs";
    case Intrinsic::Floor: return "floor";
    case Intrinsic::Ceil: return "ceil";
    case Intrinsic::Round: return "round";
    case Intrinsic::IfThenElse: return "if_then_else";
    case Intrinsic::Sin: return "sin";
    case Intrinsic::Cos: return "cos";
    case Intrinsic::Tan: return "tan";
    case Intrinsic::Asin: return "asin";
    case Intrinsic::Acos: return "acos";
    case Intrinsic::Atan: return "atan";
    case Intrinsic::Sinh: return "sinh";
    case Intrinsic::Cosh: return "cosh";
    case Intrinsic::Asinh: return "asinh";
    case Intrinsic::Acosh: return "acosh";
    case Intrinsic::Atanh: return "atanh";
    case Intrinsic::RoundEven: return "round_even";
    case Intrinsic::Fmod: return "fmod";
    case Intrinsic::DotU8S8x4: return "dot_u8s8x4";
  }
  return "?";
}

const char* reduce_name(ReduceKind k) {
  switch (k) {
    case ReduceKind::Sum: return "sum";
    case ReduceKind::Max: return "max";
    case ReduceKind::Min: return "min";
    case ReduceKind::Prod: return "prod";
  }
  return "?";
}

const char* for_kind_name(ForKind k) {
  switch (k) {
    case ForKind::Serial: return "for";
    case ForKind::Parallel: return "parallel";
    case ForKind::Vectorized: return "vectorized";
    case ForKind::Unrolled: return "unrolled";
    case ForKind::BlockIdxX: return "blockIdx.x";
    case ForKind::BlockIdxY: return "blockIdx.y";
    case ForKind::BlockIdxZ: return "blockIdx.z";
    case ForKind::ThreadIdxX: return "threadIdx.x";
    case ForKind::ThreadIdxY: return "threadIdx.y";
    case ForKind::ThreadIdxZ: return "threadIdx.z";
    case ForKind::VThread: return "vthread";
  }
  return "?";
}

bool is_thread_index(ForKind k) { return k >= ForKind::BlockIdxX && k <= ForKind::ThreadIdxZ; }
bool is_block_index(ForKind k) { return k >= ForKind::BlockIdxX && k <= ForKind::BlockIdxZ; }

// ---- leaves ----------------------------------------------------------------------------

Expr::Expr(int v) : Expr(make_int(v)) {}
Expr::Expr(int64_t v) : Expr(make_int(v)) {}
Expr::Expr(float v) : Expr(make_float(v)) {}
Expr::Expr(double v) : Expr(make_float(v)) {}

Var::Var(std::string name, DataType t) : Expr(std::make_shared<VarNode>(t, std::move(name))) {}

Var Var::from(const Expr& e) {
  INTERNAL_CHECK(e.as<VarNode>()) << "not a Var: " << kind_name(e.kind());
  Var v;
  v.ptr_ = e.shared();
  return v;
}

Expr make_int(int64_t v, DataType t) {
  INTERNAL_CHECK(t.is_scalar() && (t.is_integer() || t.is_bool())) << t.str();
  return Expr(std::make_shared<IntImmNode>(t, v));
}

Expr make_float(double v, DataType t) {
  INTERNAL_CHECK(t.is_scalar() && t.is_float()) << t.str();
  // Hold exactly the value that runs: literals that round to the same float are equal.
  if (t.bits == 32) v = double(float(v));
  return Expr(std::make_shared<FloatImmNode>(t, v));
}

Expr make_const(DataType t, double v) {
  Expr s = t.is_float() ? make_float(v, t.element()) : make_int(int64_t(v), t.element());
  return t.is_vector() ? broadcast(s, t.lanes) : s;
}

const int64_t* as_const_int(const Expr& e) {
  if (!e) return nullptr;
  if (auto* i = e.as<IntImmNode>()) return &i->value;
  if (auto* b = e.as<BroadcastNode>()) return as_const_int(b->value);
  return nullptr;
}

std::optional<int64_t> const_int_value(const Expr& e) {
  const int64_t* k = as_const_int(e);
  return k ? std::optional<int64_t>(*k) : std::nullopt;
}

bool is_const(const Expr& e, double v) {
  if (!e) return false;
  if (auto* i = e.as<IntImmNode>()) return double(i->value) == v;
  if (auto* f = e.as<FloatImmNode>()) return f->value == v;
  if (auto* b = e.as<BroadcastNode>()) return is_const(b->value, v);
  return false;
}

// ---- operators -------------------------------------------------------------------------

namespace {

bool is_imm(const Expr& e) { return e.as<IntImmNode>() || e.as<FloatImmNode>(); }

// Converts an immediate to type t (scalar element type), keeping its value.
Expr convert_imm(const Expr& e, DataType t) {
  double v = e.as<IntImmNode>() ? double(e.as<IntImmNode>()->value) : e.as<FloatImmNode>()->value;
  if (t.is_float()) return make_float(v, t.element());
  if (auto* i = e.as<IntImmNode>()) return make_int(i->value, t.element());
  INTERNAL_CHECK(v == std::floor(v)) << "float literal " << v << " used as " << t.str();
  return make_int(int64_t(v), t.element());
}

// Brings a and b to one type: immediates follow the other side, scalars are broadcast.
void unify(Expr& a, Expr& b) {
  if (a.type().element() != b.type().element()) {
    if (is_imm(a) && !is_imm(b)) a = convert_imm(a, b.type());
    else if (is_imm(b) && !is_imm(a)) b = convert_imm(b, a.type());
    else if (is_imm(a) && is_imm(b) && a.type().is_float() != b.type().is_float()) {
      if (a.type().is_float()) b = convert_imm(b, a.type());
      else a = convert_imm(a, b.type());
    }
  }
  if (a.type().lanes != b.type().lanes) {
    if (a.type().is_scalar()) a = broadcast(a, b.type().lanes);
    else if (b.type().is_scalar()) b = broadcast(b, a.type().lanes);
  }
  INTERNAL_CHECK(a.type() == b.type())
      << "operand types differ: " << a.type().str() << " vs " << b.type().str();
}

}  // namespace

Expr make_binary(NodeKind k, Expr a, Expr b) {
  INTERNAL_CHECK(a && b) << "undefined operand of " << kind_name(k);
  unify(a, b);
  DataType t = a.type();
  switch (k) {
#define TUNER_BINARY(T, op)                                                                 \
  case NodeKind::T:                                                                         \
    if (is_comparison(k)) t = DataType::boolean().with_lanes(a.type().lanes);                \
    if (k == NodeKind::And || k == NodeKind::Or) {                                          \
      INTERNAL_CHECK(t.is_bool()) << #T " needs bool operands, got " << t.str();            \
    }                                                                                       \
    if (k == NodeKind::Div) {                                                               \
      INTERNAL_CHECK(t.is_float()) << "integer '/': use floordiv";                          \
    }                                                                                       \
    if (k == NodeKind::FloorDiv || k == NodeKind::FloorMod) {                               \
      INTERNAL_CHECK(t.is_integer()) << #T " needs integers, got " << t.str();              \
    }                                                                                       \
    return Expr(std::make_shared<T##Node>(t, std::move(a), std::move(b)));
#include "te/IRNodes.def"
    default: break;
  }
  INTERNAL_CHECK(false) << kind_name(k) << " is not a binary operator";
}

Expr make_not(Expr a) {
  INTERNAL_CHECK(a.type().is_bool()) << "! needs bool, got " << a.type().str();
  return Expr(std::make_shared<NotNode>(a.type(), std::move(a)));
}

Expr select(Expr cond, Expr t, Expr f) {
  unify(t, f);
  INTERNAL_CHECK(cond.type().is_bool()) << "select condition must be bool";
  if (cond.type().lanes != t.type().lanes) {
    if (cond.type().is_scalar()) cond = broadcast(cond, t.type().lanes);
    else {
      t = broadcast(t, cond.type().lanes);
      f = broadcast(f, cond.type().lanes);
    }
  }
  DataType ty = t.type();
  return Expr(std::make_shared<SelectNode>(ty, std::move(cond), std::move(t), std::move(f)));
}

Expr if_then_else(Expr cond, Expr t, Expr f) {
  unify(t, f);
  INTERNAL_CHECK(cond.type().is_bool()) << "if_then_else condition must be bool";
  DataType ty = t.type();
  return Expr(std::make_shared<CallNode>(ty, Intrinsic::IfThenElse,
                                         std::vector<Expr>{std::move(cond), t, f}));
}

Expr cast(DataType t, Expr v) {
  if (v.type() == t) return v;
  if (is_imm(v) && t.is_scalar() && !t.is_bool()) return convert_imm(v, t);
  if (t.is_scalar() && v.type().is_vector()) t = t.with_lanes(v.type().lanes);
  return Expr(std::make_shared<CastNode>(t, std::move(v)));
}

Expr call(Intrinsic op, std::vector<Expr> args) {
  INTERNAL_CHECK(!args.empty()) << intrinsic_name(op) << " needs arguments";
  if (op == Intrinsic::DotU8S8x4) {
    INTERNAL_CHECK(args.size() == 2) << intrinsic_name(op) << " takes 2 arguments";
    unify(args[0], args[1]);
    INTERNAL_CHECK(args[0].type().element() == DataType::i32()) << intrinsic_name(op) << " takes int32 words";
    DataType t = args[0].type();
    return Expr(std::make_shared<CallNode>(t, op, std::move(args)));
  }
  if (op == Intrinsic::Pow || op == Intrinsic::Fmod) {
    INTERNAL_CHECK(args.size() == 2) << intrinsic_name(op) << " takes 2 arguments";
    unify(args[0], args[1]);
  } else if (op == Intrinsic::IfThenElse) {
    return if_then_else(args[0], args[1], args[2]);
  } else {
    INTERNAL_CHECK(args.size() == 1) << intrinsic_name(op) << " takes 1 argument";
  }
  INTERNAL_CHECK(args[0].type().is_float()) << intrinsic_name(op) << " needs a float argument";
  DataType t = args[0].type();
  return Expr(std::make_shared<CallNode>(t, op, std::move(args)));
}

Expr ramp(Expr base, Expr stride, int lanes) {
  INTERNAL_CHECK(base.type().is_scalar() && stride.type().is_scalar() && lanes > 1);
  unify(base, stride);
  DataType t = base.type().with_lanes(lanes);
  return Expr(std::make_shared<RampNode>(t, std::move(base), std::move(stride), lanes));
}

Expr broadcast(Expr value, int lanes) {
  INTERNAL_CHECK(value.type().is_scalar() && lanes > 1) << "broadcast of a vector";
  DataType t = value.type().with_lanes(lanes);
  return Expr(std::make_shared<BroadcastNode>(t, std::move(value), lanes));
}

Expr buffer_load(Buffer b, std::vector<Expr> indices) {
  INTERNAL_CHECK(b);
  if (indices.empty()) indices.push_back(make_int(0));  // a rank-0 buffer: its one element
  int lanes = indices[0].type().lanes;
  for (auto& i : indices) INTERNAL_CHECK(i.type().is_integer()) << "buffer index must be integer";
  DataType t = b->dtype.with_lanes(lanes);
  return Expr(std::make_shared<BufferLoadNode>(t, std::move(b), std::move(indices)));
}

Expr reduce(ReduceKind k, Expr source, std::vector<IterVar> axes) {
  INTERNAL_CHECK(!axes.empty()) << "reduction without axes";
  for (auto& a : axes) INTERNAL_CHECK(a.reduce) << "axis " << a.var.name() << " is not a reduce axis";
  DataType t = source.type();
  return Expr(std::make_shared<ReduceNode>(t, k, std::move(source), std::move(axes)));
}

Expr reduce_identity(ReduceKind k, DataType t) {
  double inf = std::numeric_limits<double>::infinity();
  switch (k) {
    case ReduceKind::Sum: return make_const(t, 0);
    case ReduceKind::Prod: return make_const(t, 1);
    // Integer limits in integer arithmetic: a double cannot hold 2^63 - 1.
    case ReduceKind::Max:
      if (t.is_float()) return make_const(t, -inf);
      if (t.is_uint()) return make_int(0, t);
      return make_int(t.bits >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t(1) << (t.bits - 1)), t);
    case ReduceKind::Min:
      if (t.is_float()) return make_const(t, inf);
      if (t.bits >= 64) return make_int(t.is_uint() ? -1 : std::numeric_limits<int64_t>::max(), t);
      return make_int(t.is_uint() ? (int64_t(1) << t.bits) - 1 : (int64_t(1) << (t.bits - 1)) - 1, t);
  }
  return Expr();
}

Expr operator+(Expr a, Expr b) { return make_binary(NodeKind::Add, std::move(a), std::move(b)); }
Expr operator-(Expr a, Expr b) { return make_binary(NodeKind::Sub, std::move(a), std::move(b)); }
Expr operator*(Expr a, Expr b) { return make_binary(NodeKind::Mul, std::move(a), std::move(b)); }
Expr operator/(Expr a, Expr b) { return make_binary(NodeKind::Div, std::move(a), std::move(b)); }
Expr operator-(Expr a) { return make_binary(NodeKind::Sub, make_const(a.type(), 0), a); }
Expr operator<(Expr a, Expr b) { return make_binary(NodeKind::LT, std::move(a), std::move(b)); }
Expr operator<=(Expr a, Expr b) { return make_binary(NodeKind::LE, std::move(a), std::move(b)); }
Expr operator>(Expr a, Expr b) { return make_binary(NodeKind::GT, std::move(a), std::move(b)); }
Expr operator>=(Expr a, Expr b) { return make_binary(NodeKind::GE, std::move(a), std::move(b)); }
Expr logical_and(Expr a, Expr b) { return make_binary(NodeKind::And, std::move(a), std::move(b)); }
Expr logical_or(Expr a, Expr b) { return make_binary(NodeKind::Or, std::move(a), std::move(b)); }
Expr logical_not(Expr a) { return make_not(std::move(a)); }
Expr eq(Expr a, Expr b) { return make_binary(NodeKind::EQ, std::move(a), std::move(b)); }
Expr ne(Expr a, Expr b) { return make_binary(NodeKind::NE, std::move(a), std::move(b)); }
Expr floordiv(Expr a, Expr b) { return make_binary(NodeKind::FloorDiv, std::move(a), std::move(b)); }
Expr floormod(Expr a, Expr b) { return make_binary(NodeKind::FloorMod, std::move(a), std::move(b)); }
Expr min(Expr a, Expr b) { return make_binary(NodeKind::Min, std::move(a), std::move(b)); }
Expr max(Expr a, Expr b) { return make_binary(NodeKind::Max, std::move(a), std::move(b)); }

// ---- statements ------------------------------------------------------------------------

Stmt make_for(Var v, Expr min, Expr extent, ForKind kind, Stmt body) {
  INTERNAL_CHECK(body) << "for without body";
  return Stmt(std::make_shared<ForNode>(std::move(v), std::move(min), std::move(extent), kind,
                                        std::move(body)));
}

Stmt buffer_store(Buffer b, Expr value, std::vector<Expr> indices) {
  INTERNAL_CHECK(b && value);
  if (indices.empty()) indices.push_back(make_int(0));
  if (value.type().element() != b->dtype) value = cast(b->dtype.with_lanes(value.type().lanes), value);
  return Stmt(std::make_shared<BufferStoreNode>(std::move(b), std::move(value), std::move(indices)));
}

Stmt allocate(Buffer b, Stmt body) {
  return Stmt(std::make_shared<AllocateNode>(std::move(b), std::move(body)));
}

Stmt if_then_else_stmt(Expr cond, Stmt then_case, Stmt else_case) {
  INTERNAL_CHECK(cond.type().is_bool()) << "if condition must be bool";
  return Stmt(std::make_shared<IfThenElseNode>(std::move(cond), std::move(then_case),
                                               std::move(else_case)));
}

Stmt seq(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (auto& s : stmts) {
    if (!s) continue;
    if (auto* q = s.as<SeqStmtNode>()) flat.insert(flat.end(), q->seq.begin(), q->seq.end());
    else flat.push_back(std::move(s));
  }
  if (flat.size() == 1) return flat[0];
  return Stmt(std::make_shared<SeqStmtNode>(std::move(flat)));
}

Stmt make_barrier() { return Stmt(std::make_shared<BarrierNode>()); }

// ---- buffers ---------------------------------------------------------------------------

int64_t BufferNode::num_elements() const { return te::num_elements(shape); }

Buffer make_buffer(std::string name, DataType t, std::vector<int64_t> shape, MemScope scope,
                   std::vector<int> dim_order) {
  if (!dim_order.empty()) {
    std::vector<int> sorted = dim_order;
    std::sort(sorted.begin(), sorted.end());
    bool perm = sorted.size() == shape.size();
    for (size_t d = 0; perm && d < sorted.size(); ++d) perm = sorted[d] == int(d);
    INTERNAL_CHECK(perm) << "buffer " << name << ": dim_order is not a permutation";
  }
  return std::make_shared<BufferNode>(std::move(name), t, std::move(shape), scope,
                                      std::move(dim_order));
}

}  // namespace tuner::te
