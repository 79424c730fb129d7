// The JSON-lines export/import format, including the acceptance round trip of issue 5.
#include "db/jsonl.h"

#include <gtest/gtest.h>

#include <sstream>

#include "db/memory_database.h"
#include "db/sqlite_database.h"
#include "support/error.h"
#include "unit/db/db_test_util.h"

namespace tuner::db {

namespace fs = std::filesystem;

using test::kArm;
using test::kX86;
using test::test_error;
using test::test_record;
using test::test_workload;

namespace {

// A database with several workloads, both targets, errors, odd doubles and equal timestamps.
void fill(Database& db) {
  std::vector<Record> round;
  for (int w = 0; w < 3; ++w) {
    int64_t id = db.commit_workload(test_workload(w));
    for (int i = 0; i < 12; ++i) {
      Record r = i % 5 == 4 ? test_error(id, i % 2 ? kX86 : kArm, MeasureStatus::RuntimeDevice, i)
                            : test_record(id, i % 2 ? kX86 : kArm, 1e-4 * (i + 1) / 3.0, i);
      r.created_ms = 1795318491000 + (i / 3);  // ties broken by key
      r.worker = i % 3 ? "local" : "worker-7/gpu0";
      r.build_seconds = 0.1 + i / 7.0;
      round.push_back(r);
    }
  }
  round[round.size() - 3].error = "line one\nline \"two\"\t\u00e9";
  db.commit_round(round);
}

std::string export_string(Database& db, ExportOptions o = {}) {
  std::ostringstream out;
  export_jsonl(db, out, o);
  return out.str();
}

}  // namespace

TEST(Jsonl, LineRoundTrip) {
  Workload w = test_workload(0);
  Record r = test_record(1, kX86, 1e-3, 5);
  r.trace = compact_trace(r.trace);
  r.median = median_of(r.times);
  r.created_ms = 1795318491123;
  std::string line = record_to_line(w, r);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_EQ(line.rfind(R"({"format":"tuner-record","version":1,"workload":{"hash":")", 0), 0u)
      << line;
  ParsedLine p = record_from_line(line);
  EXPECT_EQ(p.workload.hash, w.hash);
  EXPECT_EQ(p.workload.canonical, w.canonical);
  EXPECT_EQ(p.workload.shapes, w.shapes);
  EXPECT_EQ(p.record.trace, r.trace);
  EXPECT_EQ(p.record.times, r.times);
  EXPECT_EQ(p.record.created_ms, r.created_ms);
  EXPECT_EQ(record_key(p.record, w.hash), record_key(r, w.hash));
}

TEST(Jsonl, ExportImportExportIsByteIdentical) {
  test::TempDir dir;
  auto a = SqliteDatabase::open(dir.file("a.db"));
  fill(*a);
  std::string first = export_string(*a);
  EXPECT_EQ(std::count(first.begin(), first.end(), '\n'), 36);

  auto b = SqliteDatabase::open(dir.file("b.db"));
  std::istringstream in(first);
  ImportReport rep = import_jsonl(*b, in);
  EXPECT_EQ(rep.lines, 36);
  EXPECT_EQ(rep.inserted, 36);
  EXPECT_TRUE(rep.bad.empty());
  std::string second = export_string(*b);
  EXPECT_TRUE(first == second) << "exports differ";

  // Importing again adds nothing, into the copy and into the original.
  std::istringstream again(first);
  rep = import_jsonl(*b, again);
  EXPECT_EQ(rep.inserted, 0);
  EXPECT_EQ(rep.duplicates, 36);
  std::istringstream into_a(first);
  EXPECT_EQ(import_jsonl(*a, into_a).inserted, 0);
  EXPECT_EQ(a->count_records({}), 36);
  EXPECT_EQ(b->count_records({}), 36);
  EXPECT_TRUE(export_string(*b) == first);

  // The in-memory database exports the same bytes.
  MemoryDatabase m;
  std::istringstream into_m(first);
  import_jsonl(m, into_m);
  EXPECT_TRUE(export_string(m) == first);
}

TEST(Jsonl, ExportOneTarget) {
  MemoryDatabase db;
  fill(db);
  std::string arm = export_string(db, {.target = kArm});
  EXPECT_EQ(std::count(arm.begin(), arm.end(), '\n'), 18);
  EXPECT_EQ(arm.find(kX86), std::string::npos);
  EXPECT_EQ(export_string(db, {.target = "cuda -arch=sm_90"}), "");
}

TEST(Jsonl, BadLinesAreReportedAndSkipped) {
  MemoryDatabase src;
  fill(src);
  std::istringstream lines(export_string(src));
  std::vector<std::string> good;
  for (std::string l; std::getline(lines, l);) good.push_back(l);

  auto edited = [&](int i, const std::string& from, const std::string& to) {
    std::string l = good[i];
    size_t at = l.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return l.replace(at, from.size(), to);
  };
  std::string file = good[0] + "\n" +                                      // 1 ok
                     "{\"format\":\"tuner-record\",\"version\":1\n" +      // 2 truncated JSON
                     good[1] + "\n" +                                      // 3 ok
                     "\n" +                                                // 4 blank
                     edited(2, "\"version\":1", "\"version\":9") + "\n" +  // 5 newer format
                     edited(3, "\"status\":\"ok\"", "\"status\":\"FAST\"") + "\n" +  // 6
                     edited(4, "\"hash\":\"", "\"hash\":\"f") + "\n" +               // 7 bad hash
                     edited(5, "\"created\":\"", "\"created\":\"x") + "\n" +         // 8 bad time
                     "[1,2,3]\n" +      // 9 not an object
                     good[6] + "\r\n";  // 10 ok (CRLF)
  MemoryDatabase db;
  std::istringstream in(file);
  ImportReport rep = import_jsonl(db, in);
  EXPECT_EQ(rep.lines, 9);
  EXPECT_EQ(rep.inserted, 3);
  ASSERT_EQ(rep.bad.size(), 6u);
  std::vector<int64_t> at;
  for (auto& b : rep.bad) at.push_back(b.line);
  EXPECT_EQ(at, (std::vector<int64_t>{2, 5, 6, 7, 8, 9}));
  EXPECT_NE(rep.bad[0].reason.find("not valid JSON"), std::string::npos);
  EXPECT_NE(rep.bad[1].reason.find("version 9"), std::string::npos) << rep.bad[1].reason;
  EXPECT_NE(rep.bad[2].reason.find("FAST"), std::string::npos);
  EXPECT_EQ(db.count_records({}), 3);
}

// A line's times are judged by the FLOP count the database has for its workload, not the
// line's own: a line claiming 0 FLOPs cannot slip a 2e18 FLOP/s record past the check.
TEST(Jsonl, TimesAreJudgedByTheStoredFlops) {
  Workload w = test_workload(0);
  w.flops = 2e9;
  Workload lying = w;
  lying.flops = 0;
  std::string fast = record_to_line(lying, test_record(1, kX86, 1e-9, 1));
  std::string honest = record_to_line(w, test_record(1, kX86, 1e-3, 2));
  MemoryDatabase db;
  db.commit_workload(w);
  std::istringstream in(fast + "\n" + honest + "\n");
  ImportReport rep = import_jsonl(db, in);
  EXPECT_EQ(rep.inserted, 1);
  ASSERT_EQ(rep.bad.size(), 1u);
  EXPECT_EQ(rep.bad[0].line, 1);
  EXPECT_NE(rep.bad[0].reason.find("faster than any device"), std::string::npos) << rep.bad[0].reason;
  // In a new database the first line of a workload sets its count; a bad line adds no workload.
  MemoryDatabase fresh;
  std::istringstream again(record_to_line(w, test_record(1, kX86, 1e-9, 1)) + "\n");
  rep = import_jsonl(fresh, again);
  EXPECT_EQ(rep.bad.size(), 1u);
  EXPECT_TRUE(fresh.workloads().empty());
}

TEST(Jsonl, MissingAndMistypedFields) {
  MemoryDatabase src;
  fill(src);
  std::istringstream lines(export_string(src));
  std::string line;
  std::getline(lines, line);
  Json j = Json::parse(line);
  for (const char* key : {"target", "trace", "times", "status", "created", "workload", "worker"}) {
    Json k = j;
    k.erase(key);
    EXPECT_THROW(record_from_line(k.dump()), UserError) << key;
  }
  Json k = j;
  k["times"] = "fast";
  EXPECT_THROW(record_from_line(k.dump()), UserError);
  k = j;
  k["build_seconds"] = -1;
  EXPECT_THROW(record_from_line(k.dump()), UserError);
  k = j;
  k["median"] = 123;  // recomputed, never trusted
  EXPECT_NO_THROW(record_from_line(k.dump()));
  k["median"] = "fast";  // but a value of another type is a damaged line
  EXPECT_THROW(record_from_line(k.dump()), UserError);
}

}  // namespace tuner::db
