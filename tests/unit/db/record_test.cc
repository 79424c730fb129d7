#include "db/record.h"

#include <gtest/gtest.h>

#include <cmath>

#include "support/error.h"
#include "unit/db/db_test_util.h"

namespace tuner::db {

namespace fs = std::filesystem;

using test::kX86;
using test::test_record;

TEST(Record, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(median_of({3}), 3);
  EXPECT_DOUBLE_EQ(median_of({5, 1, 3}), 3);
  EXPECT_DOUBLE_EQ(median_of({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median_of({1e-6, 1e-6}), 1e-6);
}

TEST(Record, CheckAcceptsGoodRecords) {
  EXPECT_NO_THROW(check_record(test_record(1, kX86, 1e-3, 0)));
  EXPECT_NO_THROW(check_record(test::test_error(1, kX86, MeasureStatus::CompileHost, 0)));
}

TEST(Record, CheckRejectsBadRecords) {
  Record good = test_record(1, kX86, 1e-3, 0);
  auto rejects = [&](auto edit) {
    Record r = good;
    edit(r);
    EXPECT_THROW(check_record(r), UserError);
  };
  rejects([](Record& r) { r.workload_id = 0; });
  rejects([](Record& r) { r.target = ""; });
  rejects([](Record& r) { r.trace = "{not json"; });
  rejects([](Record& r) { r.trace_version = 0; });
  rejects([](Record& r) { r.times.clear(); });  // ok without times
  rejects([](Record& r) { r.times.push_back(0); });
  rejects([](Record& r) { r.times.push_back(NAN); });
  rejects([](Record& r) { r.times.push_back(INFINITY); });
  rejects([](Record& r) { r.build_seconds = -1; });
  rejects([](Record& r) { r.run_seconds = NAN; });
  rejects([](Record& r) {
    r.status = MeasureStatus::RunTimeout;
    r.times = {-1};
  });
}

// Times no device produces: a median under a clock cycle, or more than 1e17 FLOP/s.
TEST(Record, ImplausibleTimes) {
  auto ok = [](std::vector<double> t, double flops) {
    return times_problem(MeasureStatus::Ok, t, flops);
  };
  EXPECT_EQ(ok({1e-3}, 2e9), "");
  EXPECT_EQ(ok({4e-8}, 2e9), "");  // 5e16 FLOP/s
  EXPECT_NE(ok({1e-9, 1e-9, 1}, 2e9).find("faster than any device"), std::string::npos);
  EXPECT_NE(ok({5e-11}, 0).find("shorter than a clock cycle"), std::string::npos);
  EXPECT_EQ(ok({1e-9}, 0), "");  // no FLOP count: only the floor
  EXPECT_EQ(times_problem(MeasureStatus::RunTimeout, {}, 2e9), "");
  EXPECT_THROW(check_record([] {
                 Record r = test_record(1, kX86, 1e-3, 0);
                 r.times = {1e-11};
                 return r;
               }()),
               UserError);
}

TEST(Record, CompactTraceIsStable) {
  std::string t = compact_trace(R"({ "b" : 1, "a" : [1.5, 2] })");
  EXPECT_EQ(t, R"({"b":1,"a":[1.5,2]})");  // key order kept
  EXPECT_EQ(compact_trace(t), t);
  EXPECT_THROW(compact_trace("[1,"), UserError);
}

TEST(Record, KeyDependsOnContentOnly) {
  Record a = test_record(1, kX86, 1e-3, 7);
  a.trace = compact_trace(a.trace);
  a.created_ms = 1000;
  std::string k = record_key(a, "0123456789abcdef");
  EXPECT_EQ(k.size(), 32u);
  Record b = a;
  b.id = 42;
  b.workload_id = 9;  // ids are local to a database
  b.run_id = 3;
  b.median = 1;
  EXPECT_EQ(record_key(b, "0123456789abcdef"), k);
  EXPECT_NE(record_key(a, "0123456789abcdee"), k);
  auto differs = [&](auto edit) {
    Record c = a;
    edit(c);
    EXPECT_NE(record_key(c, "0123456789abcdef"), k);
  };
  differs([](Record& r) { r.target = test::kArm; });
  differs([](Record& r) { r.trace = R"({"x":1})"; });
  differs([](Record& r) { r.times[0] = std::nextafter(r.times[0], 1.0); });
  differs([](Record& r) { r.status = MeasureStatus::WrongAnswer; });
  differs([](Record& r) { r.worker = "w2"; });
  differs([](Record& r) { r.created_ms += 1; });
  differs([](Record& r) { r.build_seconds += 1e-9; });
  differs([](Record& r) { r.feature_version = 2; });
}

}  // namespace tuner::db
