#include "schedule/lower.h"

#include <fmt/core.h>

#include "schedule/loop_nest.h"
#include "schedule/passes.h"
#include "te/printer.h"
#include "te/simplify.h"

namespace tuner::schedule {

using te::Stmt;

std::string LoweredFunc::str() const {
  te::IRPrinter p;
  std::string s = "func " + name + "(";
  for (size_t i = 0; i < args.size(); ++i)
    s += (i ? ", " : "") + p.name_of(args[i].get()) + ": " + args[i]->dtype.str() + "[" +
         te::shape_str(args[i]->shape) + "]";
  s += ") {\n" + (body ? p.print(body, 2) : "") + "}\n";
  return s;
}

LoweredFunc lower(const State& state, const std::string& name, const LowerOptions& opts) {
  LoopNest nest = build_loop_nests(state);
  Stmt body = nest.body;
  auto step = [&](const char* pass, Stmt next) {
    if (opts.print_passes && !next.same_as(body))
      fmt::print(stderr, "--- after {} ---\n{}", pass, next ? te::to_string(next) : "(empty)\n");
    body = std::move(next);
  };
  if (opts.print_passes) fmt::print(stderr, "--- loop nests ---\n{}", te::to_string(body));
  step("flatten_storage", flatten_storage(body));
  step("simplify", te::simplify(body));
  step("partition_tails", partition_tails(body));
  step("unroll_loops", unroll_loops(body, opts.max_unroll_extent));
  step("vectorize_loops", vectorize_loops(body, opts.max_vector_lanes));
  step("legalize_parallel", legalize_parallel(body));
  step("clip_guarded_reduction_loops", clip_guarded_reduction_loops(body));
  step("version_guarded_reductions", version_guarded_reductions(body));
  step("hoist_store_guards", hoist_store_guards(body));
  step("simplify", te::simplify(body));
  verify_lowered(body, nest.args);
  return {name, nest.args, body};
}

}  // namespace tuner::schedule

namespace tuner::schedule {

LoweredFunc lower_for_features(const State& state) {
  LoopNest nest = build_loop_nests(state);
  Stmt body = te::simplify(flatten_storage(nest.body));
  return {"features", nest.args, body};
}

}  // namespace tuner::schedule
