// Row decoding shared by the SQLite database's files (internal to src/db).
#pragma once

#include <stdexcept>
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

/// A row whose fields do not decode (a status outside the schema's, a JSON field that does not
/// parse): the file was edited behind Tuner's back. The database reports it naming its file.
class BadRow : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Each throws BadRow naming the row and the field that does not decode.
Workload workload_row(const Stmt& q);
Record record_row(const Stmt& q);
TuningRun run_row(const Stmt& q);

}  // namespace tuner::db::sqlite
