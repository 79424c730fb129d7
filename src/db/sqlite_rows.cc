#include "db/sqlite_rows.h"

#include <fmt/core.h>

#include <cmath>
#include <initializer_list>

#include "support/error.h"
#include "support/json.h"

namespace tuner::db::sqlite {

namespace {

// Thrown by a json_field getter for valid JSON of the wrong form.
struct WrongForm {};

// An object whose fields named in `numbers` are numbers and in `strings` strings, where present
// (what the commands reading a run use: `report` looped for ever on some, threw on others).
const Json& object_with(const Json& j, std::initializer_list<const char*> numbers,
                        std::initializer_list<const char*> strings) {
  if (!j.is_object()) throw WrongForm{};
  for (const char* k : numbers)
    if (j.contains(k) && !(j[k].is_number() && std::isfinite(j[k].get<double>())))
      throw WrongForm{};
  for (const char* k : strings)
    if (j.contains(k) && !j[k].is_string()) throw WrongForm{};
  return j;
}

Json run_args(const Json& j) { return object_with(j, {"trials", "seed"}, {"target"}); }

Json run_progress(const Json& j) {
  object_with(j, {"trials", "budget", "latency_before_ms", "latency_after_ms"}, {"model"});
  if (j.contains("tasks")) {
    if (!j["tasks"].is_array()) throw WrongForm{};
    for (const Json& t : j["tasks"])
      object_with(t, {"weight", "flops", "trials", "seconds", "baseline_ms", "best_ms"},
                  {"workload", "name"});
  }
  return j;
}

// Column `col` of `row` ("record 3") parsed as JSON and converted by `get`; BadRow if it is not
// valid JSON of the expected form.
template <class F>
auto json_field(const Stmt& q, int col, const std::string& row, const char* field, F&& get) {
  Json j = parse_json(q.text(col), /*allow_exceptions=*/false);  // discarded: invalid or too deep
  try {
    if (!j.is_discarded()) return get(j);
  } catch (const Json::exception&) {  // of the wrong form
  } catch (const WrongForm&) {
  }
  throw BadRow(fmt::format("{} has a malformed {} field", row, field));
}

Json as_json(Json j) { return j; }

}  // namespace

const std::string kWorkloadCols =
    "SELECT id, hash, op, params, shapes, flops, canonical, created FROM workloads ";
const std::string kRecordCols =
    "SELECT r.id, r.workload_id, t.name, r.trace, r.trace_version, r.status, r.times, "
    "r.median, r.error, r.build_seconds, r.run_seconds, r.worker, r.tuner_version, "
    "r.feature_version, r.run_id, r.created, r.key "
    "FROM records r JOIN targets t ON t.id = r.target_id ";
const std::string kRunCols =
    "SELECT id, what, args, state, progress, started, finished FROM tuning_runs ";

Workload workload_row(const Stmt& q) {
  Workload w;
  w.id = q.i64(0);
  w.hash = q.text(1);
  w.op = q.text(2);
  w.params = q.text(3);
  w.shapes = json_field(q, 4, "workload " + std::to_string(w.id), "shapes", as_json);
  w.flops = q.f64(5);
  w.canonical = q.text(6);
  w.created_ms = q.i64(7);
  return w;
}

Record record_row(const Stmt& q) {
  Record r;
  r.id = q.i64(0);
  r.workload_id = q.i64(1);
  r.target = q.text(2);
  r.trace = q.text(3);
  r.trace_version = int(q.i64(4));
  std::string row = "record " + std::to_string(r.id);
  if (json_nesting(r.trace) > kMaxJsonNesting)  // printing it would overflow the stack
    throw BadRow(fmt::format("{} has a malformed trace field (nested deeper than {} levels)", row,
                             kMaxJsonNesting));
  auto status = parse_status(q.text(5));
  if (!status) throw BadRow(fmt::format("{} has an unknown status '{}'", row, q.text(5)));
  r.status = *status;
  r.times = json_field(q, 6, row, "times", [](const Json& j) { return j.get<std::vector<double>>(); });
  r.median = q.opt_f64(7);
  r.error = q.text(8);
  r.build_seconds = q.f64(9);
  r.run_seconds = q.f64(10);
  r.worker = q.text(11);
  r.tuner_version = q.text(12);
  r.feature_version = int(q.i64(13));
  r.run_id = q.opt_i64(14);
  r.created_ms = q.i64(15);
  r.key = q.text(16);
  return r;
}

TuningRun run_row(const Stmt& q) {
  TuningRun r;
  r.id = q.i64(0);
  r.what = q.text(1);
  std::string row = "tuning run " + std::to_string(r.id);
  r.args = json_field(q, 2, row, "args", run_args);
  auto state = parse_run_state(q.text(3));
  if (!state) throw BadRow(fmt::format("{} has an unknown state '{}'", row, q.text(3)));
  r.state = *state;
  r.progress = json_field(q, 4, row, "progress", run_progress);
  r.started_ms = q.i64(5);
  r.finished_ms = q.opt_i64(6);
  // Milliseconds since 1970 before the year 10000 (charts and dates need no more).
  constexpr int64_t kMaxMs = 253402300800000;
  if (r.started_ms < 0 || r.started_ms >= kMaxMs)
    throw BadRow(fmt::format("{} has a bad start time ({})", row, r.started_ms));
  if (r.finished_ms && (*r.finished_ms < 0 || *r.finished_ms >= kMaxMs))
    throw BadRow(fmt::format("{} has a bad end time ({})", row, *r.finished_ms));
  return r;
}

}  // namespace tuner::db::sqlite
