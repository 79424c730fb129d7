// The Runner interface: measures built candidates of one task. The search sees only this;
// LocalRunner (a sandboxed child process on this machine) implements it, a remote runner
// (gRPC workers) will too.
#pragma once

#include <vector>

#include "measure/builder.h"
#include "measure/measure_result.h"
#include "measure/measure_task.h"

namespace tuner::measure {

class Runner {
 public:
  virtual ~Runner() = default;
  /// Measures every candidate of `task`; results are in candidate order. A candidate that did
  /// not build keeps its build status. Errors of a candidate are results, not exceptions.
  virtual std::vector<MeasureResult> run(const MeasureTask& task,
                                         const std::vector<BuiltCandidate>& cands) = 0;
};

}  // namespace tuner::measure
