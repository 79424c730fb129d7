// The JSON-lines exchange format of tuning records (`tuner db export|import`, the checked-in
// files under tuning_logs/). One record per line, each carrying its workload, so any line can
// be imported on its own. Version 1 line, keys in this order:
//
//   {"format":"tuner-record","version":1,
//    "workload":{"hash","op","params","shapes","flops","canonical"},
//    "target":"llvm -mtriple=...","trace_version":1,"trace":{...},"status":"ok",
//    "times":[seconds...],"median":seconds|null,"error":"","build_seconds":s,"run_seconds":s,
//    "worker":"local","tuner_version":"0.1.0","feature_version":1,
//    "created":"2026-11-22T03:34:51.123Z"}
//
// Export is deterministic (canonical record order, fixed key order, compact JSON), so
// export -> import into a fresh database -> export gives the same bytes. Import is
// idempotent (records dedupe by content key), and "median" is recomputed, not trusted.
#pragma once

#include <functional>

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "db/database.h"

namespace tuner::db {

inline constexpr int kJsonlVersion = 1;

/// One record as a line (without the newline).
std::string record_to_line(const Workload& w, const Record& r);

/// A parsed line: the workload (id 0) and the record (workload_id 0).
struct ParsedLine {
  Workload workload;
  Record record;
};
/// Parses and checks one line; throws a UserError saying what is wrong.
ParsedLine record_from_line(const std::string& line);

struct ExportOptions {
  std::optional<std::string> target = std::nullopt;  // only this target's records
  std::function<bool()> stop = nullptr;  // asked before each record: true ends the export
  bool skip_damaged = false;   // rows that do not decode are warned about, not an error
};
/// Writes every matching record, one line each; returns how many. A UserError when `stop`
/// ended it. The caller checks `out` afterwards.
int64_t export_jsonl(Database& db, std::ostream& out, const ExportOptions& options = {});

struct BadLine {
  int64_t line = 0;  // 1-based
  std::string reason;
};

struct ImportReport {
  int64_t lines = 0;         // non-blank lines read
  int64_t inserted = 0;      // records added
  int64_t duplicates = 0;    // records already present
  std::vector<BadLine> bad;  // skipped lines
  bool stopped = false;      // `stop` ended the import before the end of the input
};

struct ImportOptions {
  int batch = 1000;  // records per transaction
  /// Throws a UserError for a record of a workload that this Tuner cannot use (the line is
  /// then bad): a target that does not parse, a trace that is not a schedule of the
  /// workload. It may rewrite the record (the target's canonical string). The callers pass
  /// compile::importable_check() (src/db may not depend on codegen or schedule). Empty: not
  /// checked.
  std::function<void(const Workload&, Record&)> check;
  /// Asked before each line: true ends the import there, with what was read committed.
  std::function<bool()> stop;
};
/// Imports every good line of `in`; bad lines are reported in the result and skipped.
ImportReport import_jsonl(Database& db, std::istream& in, const ImportOptions& options = {});

}  // namespace tuner::db
