// Readable printing of expressions, loop IR and compute ops. Variables and buffers get
// unique printed names (name, name_1, ...) because identity is by object, not by name.
#pragma once

#include <ostream>
#include <string>
#include <unordered_map>

#include "te/expr.h"
#include "te/tensor.h"

namespace tuner::te {

/// Prints IR; one printer keeps names consistent across several calls.
class IRPrinter {
 public:
  /// canonical = true names variables v0, v1, ... and tensors t0, t1, ... in order of first
  /// appearance, so structurally equal IR prints identically (used for hashing).
  explicit IRPrinter(bool canonical = false) : canonical_(canonical) {}

  std::string print(const Expr& e);
  std::string print(const Stmt& s, int indent = 0);
  /// "C[i, j] = sum(A[i, k] * B[k, j], k:0..K)" with shapes and dtype.
  std::string print_op(const OperationNode& op);

  std::string name_of(const VarNode* v);
  std::string name_of(const OperationNode* t);
  std::string name_of(const BufferNode* b);

 private:
  void expr(std::ostream& os, const Expr& e);
  void stmt(std::ostream& os, const Stmt& s, int indent);
  std::string unique(const std::string& base);

  bool canonical_;
  std::unordered_map<const void*, std::string> names_;
  std::unordered_map<std::string, int> used_;
};

std::string to_string(const Expr& e);
std::string to_string(const Stmt& s);
std::ostream& operator<<(std::ostream& os, const Expr& e);
std::ostream& operator<<(std::ostream& os, const Stmt& s);

}  // namespace tuner::te
