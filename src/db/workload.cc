#include "db/workload.h"

#include <fmt/format.h>

#include <cmath>

#include "support/error.h"
#include "support/hash.h"
#include "te/compute_dag.h"

namespace tuner::db {

Workload Workload::from_dag(const te::ComputeDAG& dag, std::string op, std::string params) {
  Workload w;
  w.hash = dag.hash_hex();
  w.op = std::move(op);
  w.params = std::move(params);
  for (const te::Tensor& t : dag.args()) {
    Json s = Json::object();
    s["name"] = t->name;
    s["shape"] = t->shape;
    s["dtype"] = t->dtype.str();
    w.shapes.push_back(std::move(s));
  }
  w.flops = dag.flops();
  w.canonical = dag.canonical_text();
  return w;
}

namespace {
constexpr std::string_view kModelTaskPrefix = "model:";
}

std::string model_task_op(std::string_view member_ops) {
  return std::string(kModelTaskPrefix) + std::string(member_ops);
}

std::string model_task_params(std::string_view model, size_t index) {
  return fmt::format("model={} task={}", model, index);
}

std::optional<std::string_view> model_task_members(std::string_view op) {
  if (!op.starts_with(kModelTaskPrefix)) return std::nullopt;
  return op.substr(kModelTaskPrefix.size());
}

std::string workload_hash_of(std::string_view canonical) {
  return fmt::format("{:016x}", fnv1a64(canonical));
}

void check_workload(const Workload& w) {
  USER_CHECK(w.hash.size() == 16 &&
             w.hash.find_first_not_of("0123456789abcdef") == std::string::npos)
      << "workload hash '" << w.hash << "' is not 16 lower-case hex digits";
  USER_CHECK(!w.canonical.empty()) << "workload " << w.hash << " has no canonical text";
  std::string expect = workload_hash_of(w.canonical);
  USER_CHECK(expect == w.hash) << "workload hash " << w.hash
                               << " does not match its canonical text (which hashes to " << expect
                               << ")";
  USER_CHECK(!w.op.empty()) << "workload " << w.hash << " has no op name";
  USER_CHECK(w.shapes.is_array()) << "workload " << w.hash << ": shapes must be a JSON array";
  USER_CHECK(std::isfinite(w.flops) && w.flops >= 0)
      << "workload " << w.hash << ": FLOPs must be a finite non-negative number";
}

}  // namespace tuner::db
