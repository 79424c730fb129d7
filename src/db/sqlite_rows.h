// Row decoding shared by the SQLite database's files (internal to src/db).
#pragma once

#include <string>

#include "db/database.h"
#include "db/sqlite_conn.h"

namespace tuner::db::sqlite {

/// "SELECT <workload columns> FROM workloads " (decode with workload_row).
extern const std::string kWorkloadCols;
/// "SELECT <record columns> FROM records r JOIN targets t ... " (decode with record_row).
extern const std::string kRecordCols;
/// "SELECT <run columns> FROM tuning_runs " (decode with run_row).
extern const std::string kRunCols;

Workload workload_row(const Stmt& q);
Record record_row(const Stmt& q);
TuningRun run_row(const Stmt& q);

}  // namespace tuner::db::sqlite
