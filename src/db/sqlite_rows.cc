#include "db/sqlite_rows.h"

#include "support/error.h"

namespace tuner::db::sqlite {

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
  w.shapes = Json::parse(q.text(4));
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
  auto status = parse_status(q.text(5));
  INTERNAL_CHECK(status) << "record " << r.id << " has an unknown status";
  r.status = *status;
  r.times = Json::parse(q.text(6)).get<std::vector<double>>();
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
  r.args = Json::parse(q.text(2));
  auto state = parse_run_state(q.text(3));
  INTERNAL_CHECK(state) << "tuning run " << r.id << " has an unknown state";
  r.state = *state;
  r.progress = Json::parse(q.text(4));
  r.started_ms = q.i64(5);
  r.finished_ms = q.opt_i64(6);
  return r;
}

}  // namespace tuner::db::sqlite
