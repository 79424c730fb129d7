#include "measure/local_runner.h"

#include <fmt/format.h>
#include <unistd.h>

#include "codegen/build.h"
#include "ops/registry.h"
#include "schedule/lower.h"
#include "schedule/state.h"
#include "support/error.h"

namespace tuner::measure {

namespace {

// The options with the launcher filled in: the native child unless one was given.
LocalRunnerOptions with_launcher(LocalRunnerOptions o) {
  if (o.launcher.command.empty()) o.launcher = native_launcher(o.child_path);
  return o;
}

}  // namespace

LocalRunner::LocalRunner(LocalRunnerOptions opts)
    : sandbox_(with_launcher(std::move(opts))),
      dir_(std::make_shared<TempDir>("tuner-reference")) {}

std::vector<MeasureResult> LocalRunner::run(const MeasureTask& task,
                                            const std::vector<BuiltCandidate>& cands) {
  std::lock_guard lk(mu_);
  const ChildLauncher& l = sandbox_.launcher();
  USER_CHECK(task.target.is_llvm() && task.target.llvm_arch() == l.arch)
      << "kernels for " << task.target.str() << " cannot be measured by this runner (its "
      << (l.emulated ? l.device + " " : "") << "child runs " << l.arch << " code)";
  TaskData data;
  data.key = task.key();
  if (sandbox_.has_task(data.key)) return sandbox_.run(data, cands);  // prepared: key suffices
  const te::ComputeDAG& dag = task.dag;
  data.inputs = task.inputs.empty() ? ops::random_inputs(dag, task.input_seed) : task.inputs;
  USER_CHECK(data.inputs.size() == dag.inputs().size())
      << "the task has " << data.inputs.size() << " inputs, the workload " << dag.inputs().size();
  for (size_t i = 0; i < data.inputs.size(); ++i) {
    const auto& t = dag.inputs()[i];
    USER_CHECK(data.inputs[i].shape == t->shape && data.inputs[i].dtype == t->dtype)
        << "input " << i << " of the task does not match the workload's " << t->name;
  }
  for (const auto& t : dag.outputs()) data.outputs.push_back({t->dtype, t->shape});
  if (!task.expected.empty()) {
    USER_CHECK(!task.inputs.empty()) << "expected outputs need explicit inputs";
    data.expected = task.expected;  // checked against the outputs by the sandbox
    return sandbox_.run(data, cands);
  }
  // The reference: the untransformed schedule (simple loops, correct by construction), built
  // at opt level 1 and run once in the child, which writes the expected outputs.
  dir_->ensure_exists();
  data.reference_so = fmt::format("{}/reference{}.so", dir_->path(), ++next_);
  struct Unlink {
    std::string path;
    ~Unlink() { unlink(path.c_str()); }
  } unlink_reference{data.reference_so};
  codegen::BuildOptions bo;
  bo.opt_level = 1;
  codegen::build_shared_object({schedule::lower(schedule::State(dag), data.reference_symbol)},
                               task.target, data.reference_so, bo);
  return sandbox_.run(data, cands);
}

}  // namespace tuner::measure
