#include "te/tensor.h"

#include <set>

#include "support/error.h"
#include "te/functor.h"

namespace tuner::te {

Expr Tensor::operator()(std::vector<Expr> indices) const {
  const auto& op = **this;
  INTERNAL_CHECK(indices.size() == op.shape.size())
      << "tensor " << op.name << " has " << op.shape.size() << " dimensions, read with "
      << indices.size() << " indices";
  for (auto& i : indices) {
    INTERNAL_CHECK(i.type().is_integer()) << "index of " << op.name << " is not an integer";
    if (i.type() != DataType::i64()) i = cast(DataType::i64(), i);
  }
  return Expr(std::make_shared<TensorReadNode>(op.dtype, *this, std::move(indices)));
}

const std::vector<int64_t>& Tensor::shape() const { return (*this)->shape; }
DataType Tensor::dtype() const { return (*this)->dtype; }
const std::string& Tensor::name() const { return (*this)->name; }

namespace {

std::vector<Tensor> tensors_read(const Expr& body) {
  std::vector<Tensor> out;
  if (!body) return out;
  std::set<const OperationNode*> seen;
  post_order_visit(body, [&](const Expr& e) {
    if (auto* r = e.as<TensorReadNode>())
      if (seen.insert(r->tensor.get()).second) out.push_back(r->tensor);
  });
  return out;
}

}  // namespace

// The cache is written only by set_body, while a node is being built, so concurrent readers
// (parallel candidate builds) never race; a body assigned directly is walked each time.
std::vector<Tensor> OperationNode::inputs() const {
  if (body && body.get() == inputs_body_.get()) return inputs_;
  return tensors_read(body);
}

void OperationNode::set_body(Expr b) {
  body = std::move(b);
  inputs_ = tensors_read(body);
  inputs_body_ = body;
}

int64_t num_elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::string shape_str(const std::vector<int64_t>& shape) {
  // An error about a tensor of hundreds of dimensions stays one readable line.
  constexpr size_t kShown = 10;
  std::string s;
  for (size_t i = 0; i < shape.size() && i < kShown; ++i)
    s += (i ? "x" : "") + std::to_string(shape[i]);
  if (shape.size() > kShown) s += "x... (" + std::to_string(shape.size()) + " dimensions)";
  return s.empty() ? "scalar" : s;
}

namespace {
void check_shape(const std::vector<int64_t>& shape, const std::string& name) {
  int64_t n = 1;
  for (auto d : shape) {
    USER_CHECK(d > 0) << "tensor " << name << " has a non-positive dimension in shape "
                      << shape_str(shape);
    USER_CHECK(n <= (int64_t(1) << 40) / d)
        << "tensor " << name << " of shape " << shape_str(shape) << " is too large";
    n *= d;
  }
}
}  // namespace

Tensor placeholder(std::vector<int64_t> shape, DataType dtype, std::string name) {
  check_shape(shape, name);
  auto op = std::make_shared<OperationNode>();
  op->name = std::move(name);
  op->shape = std::move(shape);
  op->dtype = dtype;
  op->is_placeholder = true;
  return Tensor(std::move(op));
}

Tensor compute(std::vector<int64_t> shape, const std::function<Expr(const std::vector<Var>&)>& f,
               std::string name, std::string tag, std::map<std::string, int64_t> attrs) {
  check_shape(shape, name);
  static const char* kAxisNames[] = {"i", "j", "k", "l", "m", "n", "o", "p"};
  auto op = std::make_shared<OperationNode>();
  std::vector<Var> vars;
  for (size_t d = 0; d < shape.size(); ++d) {
    vars.emplace_back(d < 8 ? kAxisNames[d] : "ax" + std::to_string(d));
    op->axes.push_back({vars.back(), shape[d], false});
  }
  Expr body = f(vars);
  INTERNAL_CHECK(body) << "compute " << name << " returned no expression";
  if (auto* r = body.as<ReduceNode>()) {
    op->reduce_axes = r->axes;
    if (tag == "injective") tag = "reduce";
  }
  // A reduction may only stand at the top of a body.
  post_order_visit(body, [&](const Expr& e) {
    INTERNAL_CHECK(!e.as<ReduceNode>() || e.same_as(body))
        << "compute " << name << ": a reduction must be the whole body";
  });
  op->name = std::move(name);
  op->shape = std::move(shape);
  op->dtype = body.type();
  op->is_placeholder = false;
  op->set_body(std::move(body));
  op->tag = std::move(tag);
  op->attrs = std::move(attrs);
  return Tensor(std::move(op));
}

IterVar reduce_axis(int64_t extent, std::string name) {
  USER_CHECK(extent > 0) << "reduction axis " << name << " has extent " << extent;
  return {Var(std::move(name)), extent, true};
}

Expr sum(Expr source, std::vector<IterVar> axes) { return reduce(ReduceKind::Sum, source, axes); }
Expr max_reduce(Expr source, std::vector<IterVar> axes) {
  return reduce(ReduceKind::Max, source, axes);
}
Expr min_reduce(Expr source, std::vector<IterVar> axes) {
  return reduce(ReduceKind::Min, source, axes);
}

}  // namespace tuner::te
