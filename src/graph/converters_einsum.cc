// Einsum as one te compute over the output's labels, summing the product of the operands
// over the labels the output drops; a label repeated within an operand reads its diagonal.
// Compiled models get matrix-product forms as Transpose and MatMul nodes (lower_einsum).
#include "graph/converters_impl.h"
#include "graph/einsum.h"

namespace tuner::graph::detail {

std::vector<ConvertOutput> einsum(const ConvertContext& c) {
  std::vector<ops::Shape> shapes;
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    shapes.push_back(c.input(i).shape());
    if (c.input(i).dtype() != c.input(0).dtype()) c.fail("operands must share a dtype");
  }
  EinsumSpec s = parse_einsum(c.attr("equation").s, shapes, [&](const std::string& m) { c.fail(m); });
  ops::Shape shape;
  for (int l : s.output) shape.push_back(s.size[l]);
  std::vector<int> reduced = s.reduced();
  return one(te::compute(
      shape,
      [&](const std::vector<te::Var>& o) {
        std::map<int, te::Expr> at;
        for (size_t d = 0; d < s.output.size(); ++d) at[s.output[d]] = o[d];
        std::vector<te::IterVar> raxes;
        for (int l : reduced) {
          raxes.push_back(te::reduce_axis(
              s.size[l], l < s.ellipsis ? "e" + std::to_string(l) : std::string(1, char(l))));
          at[l] = raxes.back().var;
        }
        te::Expr prod;
        for (size_t i = 0; i < s.inputs.size(); ++i) {
          std::vector<te::Expr> idx;
          for (size_t d = 0; d < s.inputs[i].size(); ++d)
            idx.push_back(shapes[i][d] == 1 ? te::Expr(0) : at[s.inputs[i][d]]);
          te::Expr v = c.input(i)(idx);
          prod = prod ? prod * v : v;
        }
        return raxes.empty() ? prod : te::reduce(te::ReduceKind::Sum, prod, raxes);
      },
      c.name(), reduced.empty() ? "" : "reduce"));
}

}  // namespace tuner::graph::detail
