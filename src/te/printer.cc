#include "te/printer.h"

#include <fmt/format.h>

#include <sstream>

namespace tuner::te {

std::string IRPrinter::unique(const std::string& base) {
  int& n = used_[base];
  std::string name = n == 0 ? base : base + "_" + std::to_string(n);
  ++n;
  // A generated name could collide with a later base name; keep going until free.
  while (n > 1 && used_.count(name) && name != base) {
    name = base + "_" + std::to_string(n++);
  }
  used_[name];
  return name;
}

std::string IRPrinter::name_of(const VarNode* v) {
  auto it = names_.find(v);
  if (it != names_.end()) return it->second;
  std::string n = canonical_ ? "v" + std::to_string(names_.size()) : unique(v->name);
  return names_[v] = n;
}

std::string IRPrinter::name_of(const OperationNode* t) {
  auto it = names_.find(t);
  if (it != names_.end()) return it->second;
  std::string n = canonical_ ? "t" + std::to_string(names_.size()) : unique(t->name);
  return names_[t] = n;
}

std::string IRPrinter::name_of(const BufferNode* b) {
  auto it = names_.find(b);
  if (it != names_.end()) return it->second;
  std::string n = canonical_ ? "b" + std::to_string(names_.size()) : unique(b->name);
  return names_[b] = n;
}

std::string IRPrinter::print(const Expr& e) {
  std::ostringstream os;
  expr(os, e);
  return os.str();
}

std::string IRPrinter::print(const Stmt& s, int indent) {
  std::ostringstream os;
  stmt(os, s, indent);
  return os.str();
}

static void print_list(IRPrinter& p, std::ostream& os, const std::vector<Expr>& v) {
  for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << p.print(v[i]);
}

void IRPrinter::expr(std::ostream& os, const Expr& e) {
  if (!e) {
    os << "<undef>";
    return;
  }
  switch (e.kind()) {
    case NodeKind::IntImm: {
      auto* op = e.as<IntImmNode>();
      os << op->value;
      if (op->type != DataType::i64()) os << "_" << op->type.str();
      return;
    }
    case NodeKind::FloatImm: {
      auto* op = e.as<FloatImmNode>();
      os << fmt::format("{}", op->value);
      if (op->type != DataType::f32()) os << "_" << op->type.str();
      else os << "f";
      return;
    }
    case NodeKind::Var: os << name_of(e.as<VarNode>()); return;
#define TUNER_BINARY(T, sym)                                                       \
  case NodeKind::T: {                                                              \
    auto* op = static_cast<const T##Node*>(e.get());                               \
    if (NodeKind::T == NodeKind::Min || NodeKind::T == NodeKind::Max) {            \
      os << sym << "(";                                                            \
      expr(os, op->a);                                                             \
      os << ", ";                                                                  \
      expr(os, op->b);                                                             \
      os << ")";                                                                   \
    } else {                                                                       \
      os << "(";                                                                   \
      expr(os, op->a);                                                             \
      os << " " sym " ";                                                           \
      expr(os, op->b);                                                             \
      os << ")";                                                                   \
    }                                                                              \
    return;                                                                        \
  }
#include "te/IRNodes.def"
    case NodeKind::Not:
      os << "!";
      expr(os, e.as<NotNode>()->a);
      return;
    case NodeKind::Select: {
      auto* op = e.as<SelectNode>();
      os << "select(";
      expr(os, op->cond);
      os << ", ";
      expr(os, op->t);
      os << ", ";
      expr(os, op->f);
      os << ")";
      return;
    }
    case NodeKind::Cast: {
      auto* op = e.as<CastNode>();
      os << op->type.str() << "(";
      expr(os, op->value);
      os << ")";
      return;
    }
    case NodeKind::Call: {
      auto* op = e.as<CallNode>();
      os << intrinsic_name(op->op) << "(";
      for (size_t i = 0; i < op->args.size(); ++i) {
        if (i) os << ", ";
        expr(os, op->args[i]);
      }
      os << ")";
      return;
    }
    case NodeKind::Ramp: {
      auto* op = e.as<RampNode>();
      os << "ramp(";
      expr(os, op->base);
      os << ", ";
      expr(os, op->stride);
      os << ", " << op->lanes << ")";
      return;
    }
    case NodeKind::Broadcast: {
      auto* op = e.as<BroadcastNode>();
      os << "x" << op->lanes << "(";
      expr(os, op->value);
      os << ")";
      return;
    }
    case NodeKind::TensorRead: {
      auto* op = e.as<TensorReadNode>();
      os << name_of(op->tensor.get()) << "[";
      print_list(*this, os, op->indices);
      os << "]";
      return;
    }
    case NodeKind::BufferLoad: {
      auto* op = e.as<BufferLoadNode>();
      os << name_of(op->buffer.get()) << "[";
      print_list(*this, os, op->indices);
      os << "]";
      return;
    }
    case NodeKind::Reduce: {
      auto* op = e.as<ReduceNode>();
      os << reduce_name(op->combiner) << "(";
      expr(os, op->source);
      for (auto& a : op->axes) os << ", " << name_of(a.var.get()) << ":" << a.extent;
      os << ")";
      return;
    }
    default: os << "<" << kind_name(e.kind()) << ">";
  }
}

void IRPrinter::stmt(std::ostream& os, const Stmt& s, int indent) {
  std::string pad(indent, ' ');
  if (!s) return;
  switch (s.kind()) {
    case NodeKind::For: {
      auto* op = s.as<ForNode>();
      os << pad << for_kind_name(op->for_kind) << " " << name_of(op->var.get()) << " in ";
      if (!is_const(op->min, 0)) {
        expr(os, op->min);
        os << " + ";
      }
      os << "[0, ";
      expr(os, op->extent);
      os << ") {\n";
      stmt(os, op->body, indent + 2);
      os << pad << "}\n";
      return;
    }
    case NodeKind::BufferStore: {
      auto* op = s.as<BufferStoreNode>();
      os << pad << name_of(op->buffer.get()) << "[";
      print_list(*this, os, op->indices);
      os << "] = ";
      expr(os, op->value);
      os << "\n";
      return;
    }
    case NodeKind::Allocate: {
      auto* op = s.as<AllocateNode>();
      os << pad << "allocate " << name_of(op->buffer.get()) << "[" << op->buffer->dtype.str()
         << " x " << op->buffer->num_elements() << "]"
         << (op->buffer->scope == MemScope::Local    ? " local"
             : op->buffer->scope == MemScope::Shared ? " shared"
                                                     : "")
         << "\n";
      stmt(os, op->body, indent);
      return;
    }
    case NodeKind::IfThenElse: {
      auto* op = s.as<IfThenElseNode>();
      os << pad << "if ";
      expr(os, op->cond);
      os << " {\n";
      stmt(os, op->then_case, indent + 2);
      if (op->else_case) {
        os << pad << "} else {\n";
        stmt(os, op->else_case, indent + 2);
      }
      os << pad << "}\n";
      return;
    }
    case NodeKind::SeqStmt:
      for (auto& x : s.as<SeqStmtNode>()->seq) stmt(os, x, indent);
      return;
    case NodeKind::Barrier: os << pad << "barrier\n"; return;
    default: os << pad << "<" << kind_name(s.kind()) << ">\n";
  }
}

std::string IRPrinter::print_op(const OperationNode& op) {
  std::ostringstream os;
  os << name_of(&op) << ": " << op.dtype.str() << "[" << shape_str(op.shape) << "]";
  if (op.is_placeholder) {
    os << " = placeholder";
    return os.str();
  }
  os << " " << op.tag;
  for (auto& [k, v] : op.attrs) os << " " << k << "=" << v;
  os << "\n  (";
  for (size_t i = 0; i < op.axes.size(); ++i)
    os << (i ? ", " : "") << name_of(op.axes[i].var.get()) << ":" << op.axes[i].extent;
  os << ") = ";
  expr(os, op.body);
  return os.str();
}

std::string to_string(const Expr& e) { return IRPrinter().print(e); }
std::string to_string(const Stmt& s) { return IRPrinter().print(s); }
std::ostream& operator<<(std::ostream& os, const Expr& e) { return os << to_string(e); }
std::ostream& operator<<(std::ostream& os, const Stmt& s) { return os << to_string(s); }

}  // namespace tuner::te
