// SqliteDatabase::verify: the full consistency check behind `tuner db verify`.
#include <fmt/format.h>

#include <map>

#include "db/sqlite_conn.h"
#include "db/sqlite_database.h"
#include "db/sqlite_rows.h"
#include "support/error.h"

namespace tuner::db {

using sqlite::Connection;
using sqlite::kRecordCols;
using sqlite::kWorkloadCols;
using sqlite::record_row;
using sqlite::workload_row;

VerifyReport SqliteDatabase::verify() {
  VerifyReport rep;
  with_reader(
      /*snapshot=*/true, [&](Connection& c) {
        for (auto& row : c.column("PRAGMA integrity_check"))
          if (row != "ok") rep.problems.push_back("integrity_check: " + row);
        for (auto& row : c.column("SELECT \"table\" || ' row ' || rowid || ' refers to a "
                                  "missing ' || parent FROM pragma_foreign_key_check"))
          rep.problems.push_back("foreign key: " + row);
        std::map<int64_t, std::string> hashes;
        {
          auto q = c.query(kWorkloadCols + "ORDER BY id");
          while (q.step()) {
            ++rep.workloads;
            Workload w;
            try {
              w = workload_row(q);
            } catch (const std::exception& e) {
              rep.problems.push_back(
                  fmt::format("workload {}: cannot be read: {}", q.i64(0), e.what()));
              continue;
            }
            hashes[w.id] = w.hash;
            try {
              check_workload(w);
            } catch (const UserError& e) {
              rep.problems.push_back(fmt::format("workload {}: {}", w.id, e.what()));
            }
          }
        }
        auto q = c.query(kRecordCols + "ORDER BY r.id");
        while (q.step()) {
          ++rep.records;
          Record r;
          try {
            r = record_row(q);
          } catch (const std::exception& e) {
            rep.problems.push_back(
                fmt::format("record {}: cannot be read: {}", q.i64(0), e.what()));
            continue;
          }
          auto bad = [&](const std::string& what) {
            rep.problems.push_back(fmt::format("record {}: {}", r.id, what));
          };
          try {
            check_record(r);
          } catch (const UserError& e) {
            bad(e.what());
            continue;
          }
          if (compact_trace(r.trace) != r.trace) bad("trace is not in compact form");
          if (r.status == MeasureStatus::Ok && r.median != median_of(r.times))
            bad("median does not match its times");
          auto h = hashes.find(r.workload_id);
          if (h != hashes.end() && record_key(r, h->second) != r.key)
            bad("content key does not match its content");
        }
      });
  return rep;
}

}  // namespace tuner::db
