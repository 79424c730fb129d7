#include "te/compute_dag.h"

#include <algorithm>

#include <fmt/format.h>

#include <functional>
#include <set>

#include "support/error.h"
#include "support/hash.h"
#include "te/functor.h"
#include "te/printer.h"

namespace tuner::te {

ComputeDAG::ComputeDAG(std::vector<Tensor> inputs, std::vector<Tensor> outputs)
    : inputs_(std::move(inputs)), outputs_(std::move(outputs)) {
  INTERNAL_CHECK(!outputs_.empty()) << "a ComputeDAG needs an output";
  std::set<const OperationNode*> visited, declared;
  for (auto& t : inputs_) {
    INTERNAL_CHECK(t->is_placeholder) << "input " << t->name << " is not a placeholder";
    declared.insert(t.get());
  }
  std::function<void(const Tensor&)> dfs = [&](const Tensor& t) {
    if (!visited.insert(t.get()).second) return;
    for (auto& in : t->inputs()) dfs(in);
    if (t->is_placeholder) {
      INTERNAL_CHECK(declared.count(t.get())) << "placeholder " << t->name << " is not an input";
    }
    ops_.push_back(t);
  };
  for (auto& t : inputs_) dfs(t);
  for (auto& t : outputs_) {
    INTERNAL_CHECK(t->is_compute()) << "output " << t->name << " is not computed";
    dfs(t);
  }
  std::set<std::string> names;
  for (auto& t : ops_)
    INTERNAL_CHECK(names.insert(t->name).second) << "two ops are named " << t->name;

  IRPrinter p(/*canonical=*/true);
  std::string text;
  for (auto& t : inputs_) p.name_of(t.get());
  for (auto& t : ops_) text += p.print_op(*t) + "\n";
  text += "outputs:";
  for (auto& t : outputs_) text += " " + p.name_of(t.get());
  canonical_ = std::move(text);
  hash_ = fnv1a64(canonical_);
}

std::vector<Tensor> ComputeDAG::args() const {
  std::vector<Tensor> a = inputs_;
  a.insert(a.end(), outputs_.begin(), outputs_.end());
  return a;
}

bool ComputeDAG::is_output(const OperationNode* op) const {
  for (auto& t : outputs_)
    if (t.get() == op) return true;
  return false;
}

std::vector<Tensor> ComputeDAG::consumers(const OperationNode* t) const {
  std::vector<Tensor> out;
  for (auto& op : ops_)
    for (auto& in : op->inputs())
      if (in.get() == t) {
        out.push_back(op);
        break;
      }
  return out;
}

std::string ComputeDAG::hash_hex() const { return fmt::format("{:016x}", hash_); }

namespace {

// Float operations of an expression (and a byte dot product's); a lazy if_then_else counts its condition and the
// larger of its branches (only one runs: a chain of formulas picked per element counts one).
class FlopCounter : public IRVisitor {
 public:
  double count = 0;

  void visit(const Expr& e) override {
    if (e.type().is_float()) switch (e.kind()) {
        case NodeKind::Add: case NodeKind::Sub: case NodeKind::Mul: case NodeKind::Div:
        case NodeKind::Min: case NodeKind::Max: case NodeKind::Call:
          count += 1;
          break;
        default: break;
      }
    auto* c = e.as<CallNode>();
    if (c && c->op == Intrinsic::DotU8S8x4) count += 7;  // 4 multiplies, 3 adds (integer)
    if (!c || c->op != Intrinsic::IfThenElse) return IRVisitor::visit(e);
    FlopCounter then_case, else_case;
    visit(c->args[0]);
    then_case.visit(c->args[1]);
    else_case.visit(c->args[2]);
    count += std::max(then_case.count, else_case.count);
  }
  using IRVisitor::visit;
};

}  // namespace

double ComputeDAG::flops() const {
  double total = 0;
  for (auto& t : ops_) {
    if (t->is_placeholder) continue;
    double points = double(num_elements(t->shape));
    Expr body = t->body;
    double per_point = 0;
    if (auto* r = body.as<ReduceNode>()) {
      double red = 1;
      for (auto& a : r->axes) red *= double(a.extent);
      points *= red;
      per_point = 1;  // the combine
      body = r->source;
    }
    FlopCounter ops;
    ops.visit(body);
    total += points * (per_point + ops.count);
  }
  return total;
}

std::string ComputeDAG::str() const {
  IRPrinter p;
  std::string s;
  for (auto& t : ops_) s += p.print_op(*t) + "\n";
  return s;
}

}  // namespace tuner::te
