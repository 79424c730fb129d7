#include "graph/graph.h"

#include <algorithm>
#include <sstream>

#include "support/error.h"

namespace tuner::graph {

int64_t Value::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

bool Value::same_scalar_constant(const Value& o) const {
  return is_constant() && o.is_constant() && dtype == o.dtype && num_elements() == 1 && o.num_elements() == 1 &&
         data->get(0) == o.data->get(0);
}

int Graph::add_value(Value v) {
  values.push_back(std::move(v));
  return int(values.size()) - 1;
}

int Graph::add_constant(std::string name, ops::HostTensor t) {
  Value v;
  v.name = std::move(name);
  v.shape = t.shape;
  v.dtype = t.dtype;
  v.data = std::make_shared<const ops::HostTensor>(std::move(t));
  return add_value(std::move(v));
}

int Graph::add_node(Node n) {
  int id = int(nodes.size());
  for (int o : n.outputs) values.at(o).producer = id;
  nodes.push_back(std::move(n));
  return id;
}

void Graph::replace_node(size_t i, std::vector<Node> fresh) {
  nodes.erase(nodes.begin() + std::ptrdiff_t(i));
  nodes.insert(nodes.begin() + std::ptrdiff_t(i), std::make_move_iterator(fresh.begin()),
               std::make_move_iterator(fresh.end()));
  for (size_t j = 0; j < nodes.size(); ++j)
    if (!nodes[j].dead)
      for (int v : nodes[j].outputs) values[size_t(v)].producer = int(j);
}

Attr ints_attr(std::vector<int64_t> v) {
  Attr a;
  a.kind = Attr::Ints;
  a.ints = std::move(v);
  return a;
}

std::vector<int> Graph::consumers(int v) const {
  std::vector<int> out;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].dead) continue;
    if (std::find(nodes[i].inputs.begin(), nodes[i].inputs.end(), v) != nodes[i].inputs.end())
      out.push_back(int(i));
  }
  return out;
}

int Graph::use_count(int v) const {
  int n = is_output(v) ? 1 : 0;
  for (const Node& node : nodes)
    if (!node.dead) n += int(std::count(node.inputs.begin(), node.inputs.end(), v));
  return n;
}

bool Graph::is_output(int v) const {
  return std::find(outputs.begin(), outputs.end(), v) != outputs.end();
}

void Graph::replace_uses(int from, int to) {
  for (Node& n : nodes)
    if (!n.dead) std::replace(n.inputs.begin(), n.inputs.end(), from, to);
  std::replace(outputs.begin(), outputs.end(), from, to);
}

void Graph::compact() {
  std::vector<int> node_map(nodes.size(), -1), value_map(values.size(), -1);
  std::vector<Node> kept_nodes;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].dead) continue;
    node_map[i] = int(kept_nodes.size());
    kept_nodes.push_back(std::move(nodes[i]));
  }
  std::vector<bool> used(values.size(), false);
  for (int v : inputs) used[v] = true;
  for (int v : outputs) used[v] = true;
  for (const Node& n : kept_nodes) {
    for (int v : n.inputs)
      if (v >= 0) used[v] = true;
    for (int v : n.outputs) used[v] = true;
  }
  std::vector<Value> kept_values;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!used[i]) continue;
    value_map[i] = int(kept_values.size());
    Value v = std::move(values[i]);
    if (v.producer >= 0) v.producer = node_map[v.producer];
    kept_values.push_back(std::move(v));
  }
  auto remap = [&](std::vector<int>& ids) {
    for (int& v : ids)
      if (v >= 0) v = value_map[v];
  };
  for (Node& n : kept_nodes) {
    remap(n.inputs);
    remap(n.outputs);
  }
  remap(inputs);
  remap(outputs);
  nodes = std::move(kept_nodes);
  values = std::move(kept_values);
}

size_t Graph::num_nodes() const {
  return size_t(std::count_if(nodes.begin(), nodes.end(), [](const Node& n) { return !n.dead; }));
}

std::string describe(const Node& n) { return n.op + " '" + n.name + "'"; }

namespace {
std::string value_str(const Graph& g, int v) {
  if (v < 0) return "-";
  const Value& val = g.values[v];
  std::string s = "%" + val.name + ":" + val.dtype.str() + "[" + te::shape_str(val.shape) + "]";
  if (val.is_constant()) s += "(const)";
  return s;
}
}  // namespace

std::string Graph::str() const {
  std::ostringstream os;
  os << "graph " << name << " (opset " << opset << ", " << num_nodes() << " nodes)\n";
  for (int v : inputs) os << "  input " << value_str(*this, v) << "\n";
  for (const Node& n : nodes) {
    if (n.dead) continue;
    os << "  ";
    for (size_t i = 0; i < n.outputs.size(); ++i)
      os << (i ? ", " : "") << value_str(*this, n.outputs[i]);
    os << " = " << n.op << "(";
    for (size_t i = 0; i < n.inputs.size(); ++i) os << (i ? ", " : "") << value_str(*this, n.inputs[i]);
    os << ")\n";
  }
  for (int v : outputs) os << "  output " << value_str(*this, v) << "\n";
  return os.str();
}

}  // namespace tuner::graph
