#include "compile/record_lookup.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <map>
#include <memory>
#include <sstream>
#include <vector>

#include "codegen/target.h"
#include "db/workload.h"
#include "ops/registry.h"
#include "schedule/schedule.h"
#include "schedule/trace.h"
#include "support/error.h"
#include "support/json.h"

namespace tuner::compile {

db::Workload resolve_workload(db::Database& d, const std::string& what) {
  if (auto w = d.find_workload(what)) return *w;
  std::vector<db::Workload> hits;
  for (auto& w : d.workloads())
    if ((what.size() >= 4 && w.hash.rfind(what, 0) == 0) || w.op == what) hits.push_back(w);
  USER_CHECK(!hits.empty()) << "no workload '" << what << "' in the database"
                            << (what.size() < 4 ? " (a hash prefix needs at least 4 digits)" : "")
                            << " (`tuner db list` shows them)";
  std::vector<std::string> names;
  for (auto& w : hits) names.push_back(w.hash + " (" + w.op + " " + w.params + ")");
  USER_CHECK(hits.size() == 1) << "'" << what << "' matches " << hits.size()
                               << " workloads: " << fmt::format("{}", fmt::join(names, ", "));
  return hits[0];
}

std::string resolve_target(db::Database& d, const db::Workload& w, const std::string& what) {
  if (!what.empty()) return resolve_target(d, what);
  std::vector<std::string> hits;
  for (auto& s : d.summaries())
    if (s.workload_id == w.id) hits.push_back(s.target);
  USER_CHECK(!hits.empty()) << "workload " << w.hash << " has no records";
  USER_CHECK(hits.size() == 1) << "workload " << w.hash << " has records of " << hits.size()
                               << " targets; pick one with --target: "
                               << fmt::format("{}", fmt::join(hits, " | "));
  return hits[0];
}

std::string resolve_target(db::Database& d, const std::string& what) {
  // Another spelling of a whole target (aarch64-linux-gnu for aarch64-unknown-linux-gnu)
  // names the target of its canonical string, as `db import` stores it.
  std::string canonical;
  try {
    canonical = codegen::Target::parse(what).str();
  } catch (const UserError&) {
  }
  std::vector<std::string> known, hits;
  for (auto& t : d.targets())
    if (t.name == what || t.name == canonical) return t.name;
  for (auto& t : d.targets()) {
    known.push_back(t.name);
    if (t.name.rfind(what + " ", 0) == 0 &&
        (!codegen::is_emulated_target(t.name) || codegen::is_emulated_target(what)))
      hits.push_back(t.name);
  }
  USER_CHECK(!hits.empty()) << "no target '" << what << "' in the database (known: "
                            << (known.empty() ? "none" : fmt::format("{}", fmt::join(known, " | ")))
                            << ")";
  USER_CHECK(hits.size() == 1) << "target '" << what
                               << "' is ambiguous: " << fmt::format("{}", fmt::join(hits, " | "));
  return hits[0];
}

std::optional<te::ComputeDAG> rebuild_op_dag(const db::Workload& w) {
  try {
    const ops::OpDef& def = ops::find_op(w.op);
    std::vector<std::string> kv;
    std::istringstream is(w.params);
    for (std::string tok; is >> tok;) kv.push_back(tok);
    te::ComputeDAG dag = def.build(ops::parse_params(def, kv));
    if (dag.hash_hex() == w.hash) return dag;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

std::function<void(const db::Workload&, db::Record&)> importable_check() {
  // Per (hash, op, params): the DAG they build and its workload, rebuilt once per import.
  struct Built {
    te::ComputeDAG dag;
    db::Workload workload;
  };
  auto built = std::make_shared<std::map<std::string, std::optional<Built>>>();
  return [built](const db::Workload& w, db::Record& r) {
    // Stored under its canonical string, the target's identity: another spelling of it
    // ("-mcpu=X -mtriple=Y", extra spaces) would be a target nothing looks up.
    r.target = codegen::Target::parse(r.target).str();
    USER_CHECK(r.trace_version == schedule::Trace::kVersion)
        << "trace version " << r.trace_version << " is not supported (this Tuner reads "
        << schedule::Trace::kVersion << ")";
    schedule::Trace trace;
    try {
      trace = schedule::Trace::from_json(parse_json(r.trace));
    } catch (const UserError& e) {
      USER_ERROR() << "the trace is not a schedule: " << e.what();
    }
    std::string key = w.hash + '\n' + w.op + '\n' + w.params;  // one hash, many claims
    auto it = built->find(key);
    if (it == built->end()) {
      std::optional<Built> b;
      if (auto dag = rebuild_op_dag(w))
        b = Built{*dag, db::Workload::from_dag(*dag, w.op, w.params)};
      it = built->emplace(key, std::move(b)).first;
    }
    if (!it->second) {
      // A model's task ("model:Conv+Relu") needs its model to be rebuilt; an operator's
      // workload must be what its op and parameters build, or nothing would ever find it
      // (and listings would show another operator than the one tuned).
      USER_CHECK(db::model_task_members(w.op))
          << "workload " << w.hash << " is not what op '" << w.op << "' with parameters '"
          << w.params << "' builds (an unknown op, bad parameters or another Tuner's workload)";
      return;
    }
    const db::Workload& expect = it->second->workload;
    USER_CHECK(expect.shapes == w.shapes && std::abs(expect.flops - w.flops) <= 1e-9 * expect.flops)
        << "workload " << w.hash << " (" << w.op << " " << w.params
        << "): its shapes or FLOP count are not those its op builds";
    try {
      schedule::Schedule::replay(it->second->dag, trace);
    } catch (const std::exception& e) {  // a ScheduleError or a UserError
      USER_ERROR() << "the trace does not apply to workload " << w.hash << " (" << w.op << " "
                   << w.params << "): " << e.what();
    }
  };
}

}  // namespace tuner::compile
