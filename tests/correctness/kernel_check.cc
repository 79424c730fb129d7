#include "kernel_check.h"

#include <algorithm>
#include <limits>

namespace tuner::testing {

OpCase::OpCase(const std::string& op, const std::vector<std::string>& p, uint64_t seed)
    : def(&ops::find_op(op)), params(ops::parse_params(*def, p)), dag(def->build(params)) {
  inputs = def->make_inputs(params, dag, seed);
  expected = def->reference(params, inputs);
}

void poison_with_nan(OpCase& c) {
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    ops::HostTensor& t = c.inputs[i];
    if (!t.dtype.is_float()) continue;
    for (int64_t j = int64_t(i); j < t.num_elements(); j += int64_t(5 + 2 * i))
      t.set(j, std::numeric_limits<double>::quiet_NaN());
  }
  c.expected = c.def->reference(c.params, c.inputs);
}

std::string OpCase::str() const { return def->name + " " + params.str(); }

const codegen::Target& host_target() {
  static codegen::Target t = codegen::Target::parse("llvm");
  return t;
}

runtime::ThreadPool& test_pool() {
  static runtime::ThreadPool pool(2);
  return pool;
}

std::string check_schedule(const OpCase& c, const schedule::State& state, double rtol, double atol,
                           const codegen::CompileOptions& opts) {
  auto kernel = codegen::compile_kernel(state, host_target(), "k", opts);
  std::vector<ops::HostTensor> outputs;
  for (auto& t : c.dag.outputs()) outputs.emplace_back(t->shape, t->dtype);
  std::vector<void*> args;
  for (auto& t : c.inputs) args.push_back(const_cast<void*>(t.raw()));
  for (auto& t : outputs) args.push_back(t.raw());
  TunerEnv env = test_pool().env();
  kernel(args.data(), env);
  for (size_t i = 0; i < outputs.size(); ++i) {
    auto r = ops::compare(outputs[i], c.expected[i], rtol, std::max(atol, c.def->atol));
    if (!r.ok) return "output " + std::to_string(i) + ": " + r.message;
  }
  return "";
}

}  // namespace tuner::testing
