// Tuning-database benchmarks (issue 5 targets: top-1 query <= 1 ms with 1,000,000 records;
// committing a 64-record round <= 20 ms). The peer is the same top-1 query as a bare SQLite
// prepared statement on the same file: the ratio is the cost of the Database layer.
//
// The 1,000,000-record database is built once at $TMPDIR/tuner_db_bench.db (about a minute)
// and reused by later runs. Run: build-dir/bench/db_bench
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <sqlite3.h>

#include <filesystem>
#include <random>

#include "db/sqlite_database.h"

namespace {

using namespace tuner;
using db::Record;
using db::SqliteDatabase;

constexpr int kWorkloads = 1000;
constexpr int kPerPair = 500;  // records per (workload, target): 1000 x 2 x 500 = 1,000,000
constexpr int64_t kRecords = int64_t(kWorkloads) * 2 * kPerPair;
const char* kTargets[2] = {"llvm -mtriple=x86_64-pc-linux-gnu -mcpu=znver5",
                           "llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-v2"};

std::string bench_path() {
  return (std::filesystem::temp_directory_path() / "tuner_db_bench.db").string();
}

db::Workload workload(int i) {
  db::Workload w;
  w.canonical = fmt::format(
      "A = placeholder([{0}, 256], float32)\nB = placeholder([256, 64], "
      "float32)\nC[i, j] = sum(A[i, k] * B[k, j], k in [0, 256])\noutputs: C",
      i + 1);
  w.hash = db::workload_hash_of(w.canonical);
  w.op = "matmul";
  w.params = fmt::format("M={} N=64 K=256", i + 1);
  w.flops = 2.0 * (i + 1) * 64 * 256;
  return w;
}

// A record like the search commits: a ~600-byte trace, 10 repeats.
Record record(int64_t wid, const char* target, int64_t tag, std::mt19937& rng) {
  std::uniform_real_distribution<double> t(1e-5, 1e-2);
  Record r;
  r.workload_id = wid;
  r.target = target;
  r.trace = fmt::format(
      R"({{"version":1,"insts":[{{"kind":"SamplePerfectTile","stage":"C","args":[0,4,64],)"
      R"("decision":[{},2,4,8]}},{{"kind":"SamplePerfectTile","stage":"C","args":[1,4,64],)"
      R"("decision":[4,4,2,{}]}},{{"kind":"Split","stage":"C","src":0}},{{"kind":"Split",)"
      R"("stage":"C","src":1}},{{"kind":"Reorder","stage":"C","args":[0,4,1,5,2,6,3,7]}},)"
      R"({{"kind":"SampleCategorical","args":[0,16,64,512],"probs":[0.25,0.25,0.25,0.25],)"
      R"("decision":[2]}},{{"kind":"AutoUnroll","stage":"C","src":5}},{{"kind":"Annotate",)"
      R"("stage":"C","args":[7,1]}},{{"kind":"Annotate","stage":"C","args":[0,2]}}]}})",
      tag % 64, tag / 64);
  r.trace_version = 1;
  r.status = db::MeasureStatus::Ok;
  double base = t(rng);
  for (int i = 0; i < 10; ++i) r.times.push_back(base * (1 + 0.01 * i));
  r.build_seconds = 0.3;
  r.run_seconds = 0.05;
  r.worker = "local";
  r.tuner_version = "0.1.0";
  r.feature_version = 1;
  return r;
}

// The 1,000,000-record database, built on first use.
SqliteDatabase& big_db() {
  static std::unique_ptr<SqliteDatabase> db = [] {
    auto d = SqliteDatabase::open(bench_path());
    if (d->count_records({}) >= kRecords) return d;
    fmt::print(stderr, "building {} with {} records...\n", bench_path(), kRecords);
    std::mt19937 rng(1);
    std::vector<int64_t> ids;
    for (int i = 0; i < kWorkloads; ++i) ids.push_back(d->commit_workload(workload(i)));
    for (int w = 0; w < kWorkloads; w += 10) {  // 10 workloads x 2 targets x 500 per round
      std::vector<Record> round;
      for (int k = w; k < w + 10; ++k)
        for (int t = 0; t < 2; ++t)
          for (int i = 0; i < kPerPair; ++i) round.push_back(record(ids[k], kTargets[t], i, rng));
      d->commit_round(round);
    }
    return d;
  }();
  return *db;
}

void BM_Top1(benchmark::State& state) {
  SqliteDatabase& db = big_db();
  int64_t i = 0;
  for (auto _ : state) {
    auto top = db.top_k(1 + (i * 7919) % kWorkloads, kTargets[i % 2], 1);
    benchmark::DoNotOptimize(top);
    if (top.empty()) state.SkipWithError("no record");
    ++i;
  }
  state.counters["records"] = double(db.count_records({}));
}
BENCHMARK(BM_Top1)->Unit(benchmark::kMicrosecond);

// The peer: the same query, bare SQLite, no decoding beyond the median.
void BM_Top1_BareSqlite(benchmark::State& state) {
  big_db();
  sqlite3* c = nullptr;
  sqlite3_open_v2(bench_path().c_str(), &c, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(c,
                     "SELECT r.id, r.median, r.trace, r.times FROM records r "
                     "JOIN targets t ON t.id = r.target_id WHERE r.workload_id = ? AND "
                     "t.name = ? AND r.status = 'ok' ORDER BY r.median, r.id LIMIT 1",
                     -1, &s, nullptr);
  int64_t i = 0;
  for (auto _ : state) {
    sqlite3_bind_int64(s, 1, 1 + (i * 7919) % kWorkloads);
    sqlite3_bind_text(s, 2, kTargets[i % 2], -1, SQLITE_STATIC);
    if (sqlite3_step(s) != SQLITE_ROW) state.SkipWithError("no record");
    benchmark::DoNotOptimize(sqlite3_column_double(s, 1));
    sqlite3_reset(s);
    ++i;
  }
  sqlite3_finalize(s);
  sqlite3_close(c);
}
BENCHMARK(BM_Top1_BareSqlite)->Unit(benchmark::kMicrosecond);

// One measurement round of 64 records into the 1,000,000-record database (fsync included).
void BM_CommitRound64(benchmark::State& state) {
  SqliteDatabase& db = big_db();
  std::mt19937 rng(std::random_device{}());
  static int64_t tag = int64_t(std::random_device{}()) << 20;
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<Record> round;
    for (int i = 0; i < 64; ++i, ++tag)
      round.push_back(record(1 + (tag % kWorkloads), kTargets[tag % 2], tag, rng));
    state.ResumeTiming();
    auto c = db.commit_round(round);
    if (c.inserted != 64) state.SkipWithError("duplicate records");
  }
}
BENCHMARK(BM_CommitRound64)->Unit(benchmark::kMillisecond);

// What every `tuner db` command pays to open the file: header, versions, PRAGMA quick_check.
void BM_OpenWithQuickCheck(benchmark::State& state) {
  big_db();
  for (auto _ : state)
    benchmark::DoNotOptimize(SqliteDatabase::open(bench_path(), {.mode = db::OpenMode::ReadOnly}));
}
BENCHMARK(BM_OpenWithQuickCheck)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
