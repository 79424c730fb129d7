// The IR: a closed set of immutable, reference-counted node structs (IRNodes.def).
// Expressions (Expr) and loop-IR statements (Stmt) share one kind enum; `e.as<AddNode>()`
// compares a kind tag (no RTTI). Variables and buffers are objects: identity by pointer,
// names only for printing.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "te/dtype.h"

namespace tuner::te {

enum class NodeKind : uint8_t {
#define TUNER_EXPR(T) T,
#define TUNER_STMT(T) T,
#include "te/IRNodes.def"
};

/// Name of a node kind, for messages.
const char* kind_name(NodeKind k);

struct Node {
  const NodeKind kind;
  explicit Node(NodeKind k) : kind(k) {}
  virtual ~Node() = default;
};

struct ExprNode : Node {
  const DataType type;
  ExprNode(NodeKind k, DataType t) : Node(k), type(t) {}
};

struct StmtNode : Node {
  using Node::Node;
};

/// Shared handle to an immutable node of base class `Base`.
template <class Base>
class NodeRef {
 public:
  NodeRef() = default;
  explicit NodeRef(std::shared_ptr<const Base> p) : ptr_(std::move(p)) {}

  const Base* get() const { return ptr_.get(); }
  const Base* operator->() const { return ptr_.get(); }
  explicit operator bool() const { return ptr_ != nullptr; }
  bool defined() const { return ptr_ != nullptr; }
  /// True when both handles point at the same node (what a copy-on-write pass preserves).
  bool same_as(const NodeRef& o) const { return ptr_ == o.ptr_; }
  NodeKind kind() const { return ptr_->kind; }
  const std::shared_ptr<const Base>& shared() const { return ptr_; }

  /// The node as T when its kind is T's, else nullptr.
  template <class T>
  const T* as() const {
    return ptr_ && ptr_->kind == T::kKind ? static_cast<const T*>(ptr_.get()) : nullptr;
  }

 protected:
  std::shared_ptr<const Base> ptr_;
};

class Expr : public NodeRef<ExprNode> {
 public:
  using NodeRef::NodeRef;
  Expr() = default;
  /// Integer literal (int64: all index arithmetic is 64-bit).
  Expr(int v);
  Expr(int64_t v);
  /// float32 literal.
  Expr(float v);
  Expr(double v);
  /// Not a literal: `a && b` on two Exprs tests that both are set (explicit bool) and would
  /// land here as 0 or 1; a condition is logical_and / logical_or.
  Expr(bool) = delete;
  DataType type() const { return ptr_->type; }
};

class Stmt : public NodeRef<StmtNode> {
 public:
  using NodeRef::NodeRef;
};

// ---- leaves ----------------------------------------------------------------------------

struct IntImmNode : ExprNode {
  static constexpr NodeKind kKind = NodeKind::IntImm;
  const int64_t value;
  IntImmNode(DataType t, int64_t v) : ExprNode(kKind, t), value(v) {}
};

struct FloatImmNode : ExprNode {
  static constexpr NodeKind kKind = NodeKind::FloatImm;
  const double value;
  FloatImmNode(DataType t, double v) : ExprNode(kKind, t), value(v) {}
};

struct VarNode : ExprNode {
  static constexpr NodeKind kKind = NodeKind::Var;
  const std::string name;
  VarNode(DataType t, std::string n) : ExprNode(kKind, t), name(std::move(n)) {}
};

/// A variable: a distinct object each time it is made, whatever its name.
class Var : public Expr {
 public:
  Var() = default;
  explicit Var(std::string name, DataType t = DataType::i64());
  const VarNode* get() const { return static_cast<const VarNode*>(ptr_.get()); }
  const VarNode* operator->() const { return get(); }
  const std::string& name() const { return get()->name; }
  /// Wraps an Expr already known to be a Var.
  static Var from(const Expr& e);
};

// ---- operators -------------------------------------------------------------------------

template <NodeKind K>
struct BinaryNode : ExprNode {
  static constexpr NodeKind kKind = K;
  const Expr a, b;
  BinaryNode(DataType t, Expr a_, Expr b_) : ExprNode(K, t), a(std::move(a_)), b(std::move(b_)) {}
};

#define TUNER_BINARY(T, op) using T##Node = BinaryNode<NodeKind::T>;
#include "te/IRNodes.def"

/// True for EQ, NE, LT, LE, GT, GE.
bool is_comparison(NodeKind k);

struct NotNode : ExprNode {
  static constexpr NodeKind kKind = NodeKind::Not;
  const Expr a;
  NotNode(DataType t, Expr a_) : ExprNode(kKind, t), a(std::move(a_)) {}
};

/// Evaluates both branches (use if_then_else when a branch may be unsafe to evaluate).
struct SelectNode : ExprNode {
  static constexpr NodeKind kKind = NodeKind::Select;
  const Expr cond, t, f;
  SelectNode(DataType ty, Expr c, Expr t_, Expr f_)
      : ExprNode(kKind, ty), cond(std::move(c)), t(std::move(t_)), f(std::move(f_)) {}
};

struct CastNode : ExprNode {
  static constexpr NodeKind kKind = NodeKind::Cast;
  const Expr value;
  CastNode(DataType t, Expr v) : ExprNode(kKind, t), value(std::move(v)) {}
};

/// Intrinsic functions. IfThenElse evaluates only the branch taken.
enum class Intrinsic : uint8_t {
  Exp, Log, Sqrt, Rsqrt, Tanh, Erf, Sigmoid, Pow, Fabs, Floor, Ceil, Round, IfThenElse,
  // Appended, so the values above never change.
  Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh,
  RoundEven,  // to nearest, halves to even (ONNX Round, quantization)
  Fmod,       // C's fmod(a, b), exact (a - b * trunc(a / b) is not, for a large quotient)
  // int32 a, b each holding 4 bytes: the sum of the 4 products of a's bytes as uint8 and b's
  // as int8 (x86 VNNI's vpdpbusd per lane; quantized convs, ops::conv2d byte_dot).
  DotU8S8x4,
};
const char* intrinsic_name(Intrinsic op);
/// Sin ... Atanh: the math library's function of the intrinsic's name computes them.
inline bool is_math_library_call(Intrinsic op) { return op >= Intrinsic::Sin && op <= Intrinsic::Atanh; }

struct CallNode : ExprNode {
  static constexpr NodeKind kKind = NodeKind::Call;
  const Intrinsic op;
  const std::vector<Expr> args;
  CallNode(DataType t, Intrinsic o, std::vector<Expr> a)
      : ExprNode(kKind, t), op(o), args(std::move(a)) {}
};

/// The vector base, base+stride, ..., base+(lanes-1)*stride.
struct RampNode : ExprNode {
  static constexpr NodeKind kKind = NodeKind::Ramp;
  const Expr base, stride;
  const int lanes;
  RampNode(DataType t, Expr b, Expr s, int l)
      : ExprNode(kKind, t), base(std::move(b)), stride(std::move(s)), lanes(l) {}
};

/// A scalar repeated over `lanes` lanes.
struct BroadcastNode : ExprNode {
  static constexpr NodeKind kKind = NodeKind::Broadcast;
  const Expr value;
  const int lanes;
  BroadcastNode(DataType t, Expr v, int l) : ExprNode(kKind, t), value(std::move(v)), lanes(l) {}
};

// ---- tensors and buffers ---------------------------------------------------------------

struct OperationNode;
/// A tensor is the single output of an operation (placeholder or compute).
class Tensor : public std::shared_ptr<const OperationNode> {
 public:
  using shared_ptr::shared_ptr;
  Tensor(std::shared_ptr<const OperationNode> p) : shared_ptr(std::move(p)) {}
  /// A read of this tensor at the given indices.
  Expr operator()(std::vector<Expr> indices) const;
  template <class... I>
  Expr operator()(I... idx) const {
    return (*this)(std::vector<Expr>{Expr(idx)...});
  }
  const std::vector<int64_t>& shape() const;
  DataType dtype() const;
  const std::string& name() const;
  int ndim() const { return int(shape().size()); }
};

/// A read of a te tensor at multi-dimensional indices (before lowering).
struct TensorReadNode : ExprNode {
  static constexpr NodeKind kKind = NodeKind::TensorRead;
  const Tensor tensor;
  const std::vector<Expr> indices;
  TensorReadNode(DataType t, Tensor ten, std::vector<Expr> idx)
      : ExprNode(kKind, t), tensor(std::move(ten)), indices(std::move(idx)) {}
};

/// Global: kernel arguments and root buffers; Local: private to a thread (CPU: the stack);
/// Shared: one copy per GPU thread block (CUDA __shared__, OpenCL __local).
enum class MemScope : uint8_t { Global, Local, Shared };

/// A region of memory the loop IR reads and writes (identity by pointer).
struct BufferNode {
  const std::string name;
  const DataType dtype;
  const std::vector<int64_t> shape;
  const MemScope scope;
  /// The order of the dimensions in memory, outer to inner; empty for row-major. Local
  /// buffers store the dimension their producer sweeps innermost last, so a vector over
  /// it is contiguous.
  const std::vector<int> dim_order;
  BufferNode(std::string n, DataType t, std::vector<int64_t> s, MemScope sc,
             std::vector<int> order = {})
      : name(std::move(n)), dtype(t), shape(std::move(s)), scope(sc), dim_order(std::move(order)) {}
  int64_t num_elements() const;
};
using Buffer = std::shared_ptr<const BufferNode>;
Buffer make_buffer(std::string name, DataType t, std::vector<int64_t> shape,
                   MemScope scope = MemScope::Global, std::vector<int> dim_order = {});

/// A load from a buffer; one index after storage flattening.
struct BufferLoadNode : ExprNode {
  static constexpr NodeKind kKind = NodeKind::BufferLoad;
  const Buffer buffer;
  const std::vector<Expr> indices;
  BufferLoadNode(DataType t, Buffer b, std::vector<Expr> idx)
      : ExprNode(kKind, t), buffer(std::move(b)), indices(std::move(idx)) {}
};

/// A loop iteration variable of a compute op: var over [0, extent).
struct IterVar {
  Var var;
  int64_t extent = 0;
  bool reduce = false;
};

enum class ReduceKind : uint8_t { Sum, Max, Min, Prod };
const char* reduce_name(ReduceKind k);

/// A reduction of `source` over `axes`; only at the top of a compute op's body.
struct ReduceNode : ExprNode {
  static constexpr NodeKind kKind = NodeKind::Reduce;
  const ReduceKind combiner;
  const Expr source;
  const std::vector<IterVar> axes;
  ReduceNode(DataType t, ReduceKind c, Expr s, std::vector<IterVar> a)
      : ExprNode(kKind, t), combiner(c), source(std::move(s)), axes(std::move(a)) {}
};

// ---- statements (loop IR) --------------------------------------------------------------

/// The GPU kinds are loops bound to a block or thread index (lowered to that index and a
/// guard) and virtual threads (lowered to an unrolled loop).
enum class ForKind : uint8_t {
  Serial, Parallel, Vectorized, Unrolled,
  BlockIdxX, BlockIdxY, BlockIdxZ, ThreadIdxX, ThreadIdxY, ThreadIdxZ, VThread
};
const char* for_kind_name(ForKind k);
/// True for the block and thread index kinds (not VThread).
bool is_thread_index(ForKind k);
/// True for BlockIdxX/Y/Z.
bool is_block_index(ForKind k);

struct ForNode : StmtNode {
  static constexpr NodeKind kKind = NodeKind::For;
  const Var var;
  const Expr min, extent;
  const ForKind for_kind;
  const Stmt body;
  ForNode(Var v, Expr mn, Expr ext, ForKind k, Stmt b)
      : StmtNode(kKind), var(std::move(v)), min(std::move(mn)), extent(std::move(ext)),
        for_kind(k), body(std::move(b)) {}
};

struct BufferStoreNode : StmtNode {
  static constexpr NodeKind kKind = NodeKind::BufferStore;
  const Buffer buffer;
  const Expr value;
  const std::vector<Expr> indices;
  BufferStoreNode(Buffer b, Expr v, std::vector<Expr> idx)
      : StmtNode(kKind), buffer(std::move(b)), value(std::move(v)), indices(std::move(idx)) {}
};

/// Allocates `buffer` for the duration of `body`.
struct AllocateNode : StmtNode {
  static constexpr NodeKind kKind = NodeKind::Allocate;
  const Buffer buffer;
  const Stmt body;
  AllocateNode(Buffer b, Stmt s) : StmtNode(kKind), buffer(std::move(b)), body(std::move(s)) {}
};

struct IfThenElseNode : StmtNode {
  static constexpr NodeKind kKind = NodeKind::IfThenElse;
  const Expr cond;
  const Stmt then_case, else_case;  // else_case may be undefined
  IfThenElseNode(Expr c, Stmt t, Stmt e)
      : StmtNode(kKind), cond(std::move(c)), then_case(std::move(t)), else_case(std::move(e)) {}
};

struct SeqStmtNode : StmtNode {
  static constexpr NodeKind kKind = NodeKind::SeqStmt;
  const std::vector<Stmt> seq;
  explicit SeqStmtNode(std::vector<Stmt> s) : StmtNode(kKind), seq(std::move(s)) {}
};

/// A barrier between the threads of a GPU block for shared memory (__syncthreads()).
struct BarrierNode : StmtNode {
  static constexpr NodeKind kKind = NodeKind::Barrier;
  BarrierNode() : StmtNode(kKind) {}
};

// ---- constructors (checked) -------------------------------------------------------------

Expr make_int(int64_t v, DataType t = DataType::i64());
Expr make_float(double v, DataType t = DataType::f32());
/// A constant of type t with value v (int or float per t), broadcast if t is a vector.
Expr make_const(DataType t, double v);
/// Builds a binary node; an immediate operand is converted to the other operand's type.
Expr make_binary(NodeKind k, Expr a, Expr b);
Expr make_not(Expr a);
Expr select(Expr cond, Expr t, Expr f);
/// Lazily evaluated conditional: only the branch taken is evaluated.
Expr if_then_else(Expr cond, Expr t, Expr f);
Expr cast(DataType t, Expr v);
Expr call(Intrinsic op, std::vector<Expr> args);
Expr ramp(Expr base, Expr stride, int lanes);
Expr broadcast(Expr value, int lanes);
/// A load; a rank-0 buffer (no indices) is read at index 0.
Expr buffer_load(Buffer b, std::vector<Expr> indices);
Expr reduce(ReduceKind k, Expr source, std::vector<IterVar> axes);
/// The identity element of a reduction for type t (0, -inf, +inf, 1).
Expr reduce_identity(ReduceKind k, DataType t);

Stmt make_for(Var v, Expr min, Expr extent, ForKind kind, Stmt body);
/// A store; a rank-0 buffer (no indices) is written at index 0.
Stmt buffer_store(Buffer b, Expr value, std::vector<Expr> indices);
Stmt allocate(Buffer b, Stmt body);
Stmt if_then_else_stmt(Expr cond, Stmt then_case, Stmt else_case = Stmt());
Stmt make_barrier();
/// A sequence; nested sequences are flattened and a single statement is returned as is.
Stmt seq(std::vector<Stmt> stmts);

Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
/// Float division; for integers use floordiv.
Expr operator/(Expr a, Expr b);
Expr operator-(Expr a);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
// Logical operators are functions, not overloads of && || !, so that a C++ truth test of an
// Expr handle can never build IR by accident.
Expr logical_and(Expr a, Expr b);
Expr logical_or(Expr a, Expr b);
Expr logical_not(Expr a);
Expr eq(Expr a, Expr b);
Expr ne(Expr a, Expr b);
Expr floordiv(Expr a, Expr b);
Expr floormod(Expr a, Expr b);
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);

/// The integer value of an IntImm (or a Broadcast of one), if it is one.
const int64_t* as_const_int(const Expr& e);
/// The same by value: for a temporary (`as_const_int(simplify(x))` points into freed memory).
std::optional<int64_t> const_int_value(const Expr& e);
/// True when e is an integer or float constant equal to v.
bool is_const(const Expr& e, double v);

}  // namespace tuner::te
