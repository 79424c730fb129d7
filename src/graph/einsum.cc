#include "graph/einsum.h"

#include <algorithm>
#include <cctype>

#include "support/escape.h"

namespace tuner::graph {

namespace {

// Labels of one term given its operand's rank (-1 for the output, whose ellipsis is `ell`
// wide); *width receives the term's ellipsis width.
std::vector<int> parse_term(const std::string& s, int64_t rank, int ell, int* width,
                            const std::function<void(const std::string&)>& fail) {
  size_t dots = s.find("...");
  int letters = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (std::isalpha(static_cast<unsigned char>(s[i]))) ++letters;
    else if (s[i] != '.')  // the whole character: one byte of it is not valid UTF-8
      fail("bad character '" + std::string(first_chars(std::string_view(s).substr(i), 1)) +
           "' in the equation");
  }
  if (dots != std::string::npos && s.find("...", dots + 3) != std::string::npos)
    fail("an ellipsis may appear once per term");
  if (dots == std::string::npos && std::count(s.begin(), s.end(), '.'))
    fail("a '.' outside an ellipsis in the equation");
  int w = 0;
  if (dots != std::string::npos) {
    w = rank >= 0 ? int(rank) - letters : ell;
    if (w < 0) fail("term '" + s + "' has more labels than its operand has dimensions");
  } else if (rank >= 0 && letters != rank) {
    fail("term '" + s + "' has " + std::to_string(letters) + " labels for an operand of rank " +
         std::to_string(rank));
  }
  if (width) *width = w;
  std::vector<int> labels;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i == dots) {
      for (int d = 0; d < w; ++d) labels.push_back(ell - w + d);
      i += 2;
    } else {
      labels.push_back(int(static_cast<unsigned char>(s[i])));
    }
  }
  return labels;
}

std::vector<int64_t> positions(const std::vector<int>& have, const std::vector<int>& want) {
  std::vector<int64_t> p;
  for (int l : want) p.push_back(std::find(have.begin(), have.end(), l) - have.begin());
  return p;
}

}  // namespace

std::vector<int> EinsumSpec::reduced() const {
  std::vector<int> r;
  for (const auto& [l, n] : size)
    if (std::find(output.begin(), output.end(), l) == output.end()) r.push_back(l);
  return r;
}

EinsumSpec parse_einsum(const std::string& equation, const std::vector<ops::Shape>& shapes,
                        const std::function<void(const std::string&)>& fail) {
  std::string eq = equation;
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != shapes.size())
    fail("the equation has " + std::to_string(terms.size()) + " terms for " +
         std::to_string(shapes.size()) + " inputs");
  EinsumSpec s;
  for (size_t i = 0; i < terms.size(); ++i) {
    int w = 0;
    parse_term(terms[i], int64_t(shapes[i].size()), 0, &w, fail);
    s.ellipsis = std::max(s.ellipsis, w);
  }
  for (size_t i = 0; i < terms.size(); ++i) {
    s.inputs.push_back(parse_term(terms[i], int64_t(shapes[i].size()), s.ellipsis, nullptr, fail));
    for (size_t d = 0; d < s.inputs.back().size(); ++d) {
      int l = s.inputs.back()[d];
      int64_t n = shapes[i][d];
      auto [it, fresh] = s.size.emplace(l, n);
      if (fresh || it->second == n) continue;
      if (l < s.ellipsis && (n == 1 || it->second == 1)) it->second = std::max(it->second, n);
      else
        fail("label '" + std::string(1, char(l)) + "' has sizes " + std::to_string(it->second) +
             " and " + std::to_string(n));
    }
  }
  if (arrow != std::string::npos) {
    s.output = parse_term(eq.substr(arrow + 2), -1, s.ellipsis, nullptr, fail);
    for (int l : s.output)
      if (!s.size.count(l)) fail("output label '" + std::string(1, char(l)) + "' is in no input");
  } else {  // numpy: the ellipsis, then the labels used once in alphabetical order
    std::map<int, int> uses;
    for (const auto& t : s.inputs)
      for (int l : t) ++uses[l];
    for (int d = 0; d < s.ellipsis; ++d) s.output.push_back(d);
    for (auto [l, n] : uses)
      if (l >= s.ellipsis && n == 1) s.output.push_back(l);
  }
  return s;
}

std::optional<EinsumMatmul> einsum_as_matmul(const EinsumSpec& s) {
  if (s.inputs.size() != 2) return std::nullopt;
  const auto &a = s.inputs[0], &b = s.inputs[1];
  auto count = [](const std::vector<int>& t, int l) { return std::count(t.begin(), t.end(), l); };
  for (const auto* t : {&a, &b})
    for (int l : *t)
      if (count(*t, l) != 1) return std::nullopt;  // a diagonal
  std::vector<int> m, n, k;
  for (const auto& [l, sz] : s.size) {
    bool in_a = count(a, l), in_b = count(b, l), in_o = count(s.output, l);
    if (in_a && in_b && in_o) continue;  // batch
    if (in_a && in_o) m.push_back(l);
    else if (in_b && in_o) n.push_back(l);
    else if (in_a && in_b) k.push_back(l);
    else return std::nullopt;  // summed within one operand
  }
  // One summed label; row and column labels, of which one side may have several: all but
  // its last in the output become extra batch dimensions of that operand alone, which
  // MatMul broadcasts against the other (bij,jk->bik: a batch of rows times one matrix).
  if (k.size() != 1 || m.empty() || n.empty() || (m.size() > 1 && n.size() > 1)) return std::nullopt;
  auto in_output_order = [&](const std::vector<int>& labels) {
    std::vector<int> v;
    for (int l : s.output)
      if (std::count(labels.begin(), labels.end(), l)) v.push_back(l);
    return v;
  };
  std::vector<int> rows = in_output_order(m), cols = in_output_order(n);
  int row = rows.back(), col = cols.back();
  rows.pop_back();
  cols.pop_back();
  std::vector<int> batch;  // shared by both operands, in the output's order
  for (int l : s.output)
    if (count(a, l) && count(b, l)) batch.push_back(l);
  auto order = [&](const std::vector<int>& extra, int x, int y) {
    std::vector<int> v = extra;
    v.insert(v.end(), batch.begin(), batch.end());
    v.push_back(x);
    v.push_back(y);
    return v;
  };
  EinsumMatmul r;
  r.perm_a = positions(a, order(rows, row, k[0]));
  r.perm_b = positions(b, order(cols, k[0], col));
  r.perm_out = positions(order(rows.empty() ? cols : rows, row, col), s.output);
  return r;
}

}  // namespace tuner::graph
