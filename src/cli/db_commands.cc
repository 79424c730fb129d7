// `tuner db list|best|show|stats|export|import|prune|verify`: query and maintain the tuning
// database. Tables for people, `--json` for tools. `--db PATH` (default tuning_logs/tuning.db)
// and `--json` may be given before or after the subcommand.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "codegen/target.h"
#include "compile/record_lookup.h"
#include "db/jsonl.h"
#include "db/schema.h"
#include "db/sqlite_database.h"
#include "db/timestamp.h"
#include "support/atomic_file.h"
#include "support/cli_main.h"
#include "support/error.h"
#include "support/json.h"
#include "support/stop_signal.h"

namespace tuner::cli {

namespace {

namespace fs = std::filesystem;
using db::SqliteDatabase;

struct DbOptions {
  std::string path = "tuning_logs/tuning.db";
  bool json = false;
  // Subcommand arguments.
  std::string workload, target, file, output;
  int top = 1;
  int keep = 0;
  int64_t record = 0;
  bool skip_damaged = false;
  std::string server, token_file, tls_ca;  // query a tuner-server's database instead
};

// Runs `command` on the server's database when --server is given; true if it did.
bool on_server(const std::string& command, const DbOptions& o) {
  if (o.server.empty()) return false;
  USER_CHECK(!o.token_file.empty()) << "--server needs --token-file";
  remote_db(command, {o.server, o.token_file, o.tls_ca, o.workload, o.target, o.file, o.output,
                      o.top, o.json});
  return true;
}

std::unique_ptr<SqliteDatabase> open_db(const DbOptions& o, db::OpenMode mode) {
  return SqliteDatabase::open(o.path, {.mode = mode});
}

void print_json(const Json& j) { fmt::print("{}\n", j.dump(2)); }

/// A table with aligned columns; columns whose name is in `right` align right.
class Table {
 public:
  explicit Table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void right(size_t col) { right_.push_back(col); }
  void print() const {
    std::vector<size_t> width(rows_[0].size(), 0);
    for (auto& r : rows_)
      for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
    for (auto& r : rows_) {
      std::string line;
      for (size_t i = 0; i < r.size(); ++i) {
        bool is_right = std::find(right_.begin(), right_.end(), i) != right_.end();
        bool last = i + 1 == r.size();
        if (is_right)
          line += fmt::format("{:>{}}", r[i], width[i]);
        else
          line += last ? r[i] : fmt::format("{:<{}}", r[i], width[i]);
        if (!last) line += "  ";
      }
      fmt::print("{}\n", line);
    }
  }

 private:
  std::vector<std::vector<std::string>> rows_;
  std::vector<size_t> right_;
};

std::string human_seconds(std::optional<double> s) {
  if (!s) return "-";
  if (*s >= 1) return fmt::format("{:.3f} s", *s);
  if (*s >= 1e-3) return fmt::format("{:.3f} ms", *s * 1e3);
  return fmt::format("{:.2f} us", *s * 1e6);
}

std::optional<double> gflops(const db::Workload& w, std::optional<double> median) {
  if (!median || *median <= 0 || w.flops <= 0) return std::nullopt;
  return w.flops / *median / 1e9;
}

std::string num_or_dash(std::optional<double> v) {
  return v ? fmt::format("{:.2f}", *v) : std::string("-");
}

Json opt_json(std::optional<double> v) { return v ? Json(*v) : Json(nullptr); }

Json record_json(const db::Workload& w, const db::Record& r) {
  Json j = Json::object();
  j["id"] = r.id;
  j["workload"] = w.hash;
  j["target"] = r.target;
  j["status"] = db::status_name(r.status);
  j["median"] = opt_json(r.median);
  j["gflops"] = opt_json(gflops(w, r.median));
  j["times"] = r.times;
  j["error"] = r.error;
  j["build_seconds"] = r.build_seconds;
  j["run_seconds"] = r.run_seconds;
  j["worker"] = r.worker;
  j["tuner_version"] = r.tuner_version;
  j["feature_version"] = r.feature_version;
  j["run_id"] = r.run_id ? Json(*r.run_id) : Json(nullptr);
  j["created"] = db::format_time(r.created_ms);
  j["key"] = r.key;
  j["trace_version"] = r.trace_version;
  j["trace"] = parse_json(r.trace);
  return j;
}

/// A trace for reading: top-level fields one per line, array elements (the instructions)
/// one compact line each.
std::string pretty_trace(const Json& t) {
  if (!t.is_object()) return t.dump(2);
  std::string out = "{\n";
  size_t i = 0;
  for (auto& [k, v] : t.items()) {
    out += "  " + Json(k).dump() + ": ";
    if (v.is_array() && !v.empty()) {
      out += "[\n";
      for (size_t j = 0; j < v.size(); ++j)
        out += "    " + v[j].dump() + (j + 1 < v.size() ? ",\n" : "\n");
      out += "  ]";
    } else {
      out += v.dump();
    }
    out += ++i < t.size() ? ",\n" : "\n";
  }
  return out + "}";
}

// ---- the commands

void cmd_list(const DbOptions& o) {
  auto d = open_db(o, db::OpenMode::ReadOnly);
  std::string target = o.target.empty() ? "" : compile::resolve_target(*d, o.target);
  std::map<int64_t, db::Workload> ws;
  for (auto& w : d->workloads()) ws[w.id] = w;
  std::map<int64_t, std::vector<db::WorkloadSummary>> by_workload;
  for (auto& s : d->summaries())
    if (target.empty() || s.target == target) by_workload[s.workload_id].push_back(s);
  Json out = Json::array();
  Table t({"WORKLOAD", "OP", "PARAMS", "TARGET", "RECORDS", "OK", "BEST", "GFLOP/S"});
  for (size_t c : {4, 5, 6, 7}) t.right(c);
  for (auto& w : d->workloads()) {
    auto& rows = by_workload[w.id];
    if (rows.empty() && !target.empty()) continue;
    if (rows.empty()) rows.push_back({w.id, "", 0, 0, std::nullopt});
    for (auto& s : rows) {
      auto g = gflops(w, s.best_median);
      out.push_back({{"workload", w.hash},
                     {"op", w.op},
                     {"params", w.params},
                     {"flops", w.flops},
                     {"target", s.target.empty() ? Json(nullptr) : Json(s.target)},
                     {"records", s.records},
                     {"ok_records", s.ok_records},
                     {"best_median", opt_json(s.best_median)},
                     {"best_gflops", opt_json(g)}});
      t.add({w.hash, w.op, w.params, s.target.empty() ? "-" : s.target, std::to_string(s.records),
             std::to_string(s.ok_records), human_seconds(s.best_median), num_or_dash(g)});
    }
  }
  if (o.json) return print_json(out);
  if (out.empty()) return fmt::print("no workloads in {}\n", o.path);
  t.print();
}

void cmd_best(const DbOptions& o) {
  USER_CHECK(o.top >= 1) << "--top must be at least 1";
  if (on_server("best", o)) return;
  auto d = open_db(o, db::OpenMode::ReadOnly);
  db::Workload w = compile::resolve_workload(*d, o.workload);
  std::string target = compile::resolve_target(*d, w, o.target);
  auto top = d->top_k(w.id, target, o.top);
  if (o.json) {
    Json recs = Json::array();
    for (auto& r : top) recs.push_back(record_json(w, r));
    return print_json({{"workload", w.hash},
                       {"op", w.op},
                       {"params", w.params},
                       {"flops", w.flops},
                       {"target", target},
                       {"records", recs}});
  }
  fmt::print("workload  {}  {} {}  ({:.4g} GFLOP)\ntarget    {}\n", w.hash, w.op, w.params,
             w.flops / 1e9, target);
  if (top.empty()) return fmt::print("no successful measurement yet\n");
  Table t({"RANK", "RECORD", "MEDIAN", "GFLOP/S", "REPEATS", "WORKER", "CREATED"});
  for (size_t c : {0, 1, 2, 3, 4}) t.right(c);
  for (size_t i = 0; i < top.size(); ++i) {
    auto& r = top[i];
    t.add({std::to_string(i + 1), std::to_string(r.id), human_seconds(r.median),
           num_or_dash(gflops(w, r.median)), std::to_string(r.times.size()), r.worker,
           db::format_time(r.created_ms)});
  }
  fmt::print("\n");
  t.print();
}

void cmd_show(const DbOptions& o) {
  auto d = open_db(o, db::OpenMode::ReadOnly);
  auto r = d->record(o.record);
  USER_CHECK(r) << "no record " << o.record << " in " << o.path;
  auto wl = d->workload(r->workload_id);
  USER_CHECK(wl) << o.path << " is damaged: record " << r->id << " refers to workload id "
                 << r->workload_id << ", which is missing (`tuner db verify` lists such rows)";
  const db::Workload& w = *wl;
  Json j = record_json(w, *r);
  if (o.json) return print_json(j);
  fmt::print("record           {}\nworkload         {}  {} {}\n", r->id, w.hash, w.op, w.params);
  fmt::print("target           {}\nstatus           {}\n", r->target, db::status_name(r->status));
  if (!r->error.empty()) fmt::print("error            {}\n", r->error);
  fmt::print("median           {}\nGFLOP/s          {}\n", human_seconds(r->median),
             num_or_dash(gflops(w, r->median)));
  std::vector<std::string> times;
  for (double t : r->times) times.push_back(human_seconds(t));
  fmt::print("times            {}\n",
             times.empty() ? "-" : fmt::format("{}", fmt::join(times, ", ")));
  fmt::print("build / run      {:.3f} s / {:.3f} s\n", r->build_seconds, r->run_seconds);
  fmt::print("worker           {}\ntuner            {} (features v{})\n", r->worker,
             r->tuner_version, r->feature_version);
  fmt::print("created          {}\n", db::format_time(r->created_ms));
  if (r->run_id) fmt::print("tuning run       {}\n", *r->run_id);
  fmt::print("key              {}\ntrace (v{})\n{}\n", r->key, r->trace_version,
             pretty_trace(parse_json(r->trace)));
}

void cmd_stats(const DbOptions& o) {
  auto d = open_db(o, db::OpenMode::ReadOnly);
  db::DbStats s = d->stats();
  std::error_code ec, wal_ec;
  uintmax_t bytes = fs::file_size(o.path, ec);
  // Committed pages not yet copied back (after a killed writer) are in the write-ahead log.
  uintmax_t wal = fs::file_size(o.path + "-wal", wal_ec);
  if (!ec && !wal_ec) bytes += wal;
  if (o.json) {
    auto obj = [](const std::vector<std::pair<std::string, int64_t>>& v) {
      Json j = Json::object();
      for (auto& [k, n] : v) j[k] = n;
      return j;
    };
    Json emulated = Json::array();  // targets whose records were measured under emulation
    for (auto& [t, n] : s.by_target)
      if (codegen::is_emulated_target(t)) emulated.push_back(t);
    return print_json({{"database", o.path},
                       {"bytes", ec ? 0 : bytes},
                       {"schema_version", d->schema_version()},
                       {"workloads", s.workloads},
                       {"targets", s.targets},
                       {"records", s.records},
                       {"tuning_runs", s.tuning_runs},
                       {"cost_models", s.cost_models},
                       {"by_status", obj(s.by_status)},
                       {"by_target", obj(s.by_target)},
                       {"emulated_targets", emulated},
                       {"by_worker", obj(s.by_worker)}});
  }
  fmt::print("database  {} ({:.1f} MB, schema {})\n", o.path, double(ec ? 0 : bytes) / 1e6,
             d->schema_version());
  fmt::print("{} workloads, {} targets, {} records, {} tuning runs, {} cost models\n", s.workloads,
             s.targets, s.records, s.tuning_runs, s.cost_models);
  auto group = [](const char* title, const std::vector<std::pair<std::string, int64_t>>& v) {
    if (v.empty()) return;
    Table t({title, "RECORDS"});
    t.right(1);
    for (auto& [k, n] : v) t.add({k, std::to_string(n)});
    fmt::print("\n");
    t.print();
  };
  group("STATUS", s.by_status);
  if (!s.by_target.empty()) {  // emulated targets marked: their timings are not figures
    Table t({"TARGET", "RECORDS", "MEASURED ON"});
    t.right(1);
    for (auto& [k, n] : s.by_target)
      t.add({k, std::to_string(n),
             codegen::is_emulated_target(k) ? "emulator (timings are not performance figures)"
                                            : "hardware"});
    fmt::print("\n");
    t.print();
  }
  group("WORKER", s.by_worker);
}

void cmd_export(const DbOptions& o) {
  USER_CHECK(o.server.empty() || !o.skip_damaged) << "--skip-damaged is for a local database";
  if (on_server("export", o)) return;
  auto d = open_db(o, db::OpenMode::ReadOnly);
  db::ExportOptions eo;
  eo.skip_damaged = o.skip_damaged;
  if (!o.target.empty()) eo.target = compile::resolve_target(*d, o.target);
  // A damaged row ends the export (a backup must not be silently partial); the error says how
  // to save the rest.
  auto with_hint = [&](const UserError& e) {
    std::string m = e.what();
    if (m.find("is damaged: ") == std::string::npos) throw;
    USER_ERROR() << m << " (`db export --skip-damaged` exports the readable records)";
  };
  if (o.output == "-") {
    try {
      db::export_jsonl(*d, std::cout, eo);
    } catch (const UserError& e) {
      with_hint(e);
    }
    return;
  }
  int64_t n = 0;  // a failed or interrupted export leaves no half file
  std::optional<StopSignals> stop_signals(std::in_place);
  eo.stop = StopSignals::requested;
  try {
    write_file_atomically(o.output, [&](std::ostream& out) { n = db::export_jsonl(*d, out, eo); });
  } catch (const UserError& e) {
    if (!StopSignals::requested()) with_hint(e);
    fmt::print(stderr, "interrupted: {} not written\n", o.output);
    throw CLI::RuntimeError(StopSignals::exit_status());
  }
  if (o.json) return print_json({{"exported", n}, {"file", o.output}});
  fmt::print("exported {} records to {}\n", n, o.output);
}

}  // namespace

namespace {

// Serves `head`, already read from `rest`, then the rest of `rest`: a pipe cannot seek back.
class PrefixedBuf : public std::streambuf {
 public:
  PrefixedBuf(std::string head, std::streambuf* rest) : head_(std::move(head)), rest_(rest) {
    setg(head_.data(), head_.data(), head_.data() + head_.size());
  }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    std::streamsize n = rest_->sgetn(buf_, sizeof buf_);
    if (n <= 0) return traits_type::eof();
    setg(buf_, buf_, buf_ + n);
    return traits_type::to_int_type(*gptr());
  }

 private:
  std::string head_;
  std::streambuf* rest_;
  char buf_[1 << 16];
};

}  // namespace

ImportInput::ImportInput(const std::string& path) {
  std::streambuf* src = std::cin.rdbuf();
  if (path != "-") {
    std::error_code ec;
    USER_CHECK(!std::filesystem::is_directory(path, ec)) << "cannot read '" << path << "': a directory";
    file_.open(path, std::ios::binary);
    USER_CHECK(file_) << "cannot read '" << path << "'";
    src = file_.rdbuf();
  }
  // Files that are not an export are one error, not a warning per binary "line".
  std::string head(512, '\0');
  head.resize(size_t(std::max<std::streamsize>(0, src->sgetn(head.data(), std::streamsize(head.size())))));
  std::string name = path == "-" ? "standard input" : "'" + path + "'";
  USER_CHECK(!head.starts_with(db::kSqliteHeader))
      << name << " is an SQLite database, not a JSON-lines export (`tuner db export --db "
      << (path == "-" ? "DB" : path) << " -o FILE` writes one)";
  USER_CHECK(!head.starts_with("\x1f\x8b"))
      << name << " is gzip-compressed; decompress it first (`gunzip -c FILE | tuner db import -`)";
  USER_CHECK(head.find('\0') == std::string::npos) << name << " holds binary data, not a JSON-lines export";
  buf_ = std::make_unique<PrefixedBuf>(std::move(head), src);
  in_ = std::make_unique<std::istream>(buf_.get());
}

ImportInput::~ImportInput() = default;

namespace {

void cmd_import(const DbOptions& o) {
  if (on_server("import", o)) return;
  ImportInput input(o.file);
  std::istream& in = input.stream();
  auto d = open_db(o, db::OpenMode::ReadWrite);
  db::ImportOptions io;
  io.check = compile::importable_check();
  // Ctrl-C stops at the next line of a regular file and says how far it got. Not on a pipe
  // or terminal: a read that waits would hold the signal until a line came.
  std::optional<StopSignals> stop_signals;
  std::error_code ec;
  if (o.file != "-" && std::filesystem::is_regular_file(o.file, ec)) {
    stop_signals.emplace();
    io.stop = StopSignals::requested;
  }
  db::ImportReport rep = db::import_jsonl(*d, in, io);
  USER_CHECK(!in.bad()) << "reading '" << o.file << "' failed";
  for (auto& b : rep.bad) fmt::print(stderr, "warning: {}:{}: {}\n", o.file, b.line, b.reason);
  if (o.json) {
    Json bad = Json::array();
    for (auto& b : rep.bad) bad.push_back({{"line", b.line}, {"reason", b.reason}});
    print_json({{"file", o.file},
                {"lines", rep.lines},
                {"inserted", rep.inserted},
                {"duplicates", rep.duplicates},
                {"bad_lines", bad},
                {"interrupted", rep.stopped}});
  } else {
    fmt::print("{}imported {} new records from {} ({} already present, {} bad lines skipped)\n",
               rep.stopped ? "interrupted: " : "", rep.inserted, o.file, rep.duplicates,
               rep.bad.size());
  }
  // What was read is committed; rerunning the import adds the rest (duplicates are skipped).
  if (rep.stopped) throw CLI::RuntimeError(StopSignals::exit_status());
  // A file of nothing but bad lines is not a success (a script would carry on without data).
  USER_CHECK(rep.bad.empty() || rep.inserted + rep.duplicates > 0)
      << "no valid record in '" << o.file << "' (" << rep.bad.size() << " bad lines)";
}

void cmd_prune(const DbOptions& o) {
  USER_CHECK(o.keep >= 1) << "--keep must be at least 1";
  auto d = open_db(o, db::OpenMode::ReadWrite);
  int64_t before = d->count_records({});
  int64_t deleted = d->prune(o.keep);
  if (o.json) return print_json({{"deleted", deleted}, {"kept", before - deleted}});
  fmt::print("deleted {} records, kept {} (the {} fastest of every workload and target)\n", deleted,
             before - deleted, o.keep);
}

void cmd_verify(const DbOptions& o) {
  auto d = open_db(o, db::OpenMode::ReadOnly);
  db::VerifyReport rep = d->verify();
  if (o.json)
    print_json({{"database", o.path},
                {"ok", rep.ok()},
                {"workloads", rep.workloads},
                {"records", rep.records},
                {"problems", rep.problems}});
  else if (rep.ok())
    fmt::print("ok: {} ({} workloads, {} records; integrity, hashes, keys and medians check)\n",
               o.path, rep.workloads, rep.records);
  else
    for (auto& p : rep.problems) fmt::print("{}\n", p);
  USER_CHECK(rep.ok()) << "verify found " << rep.problems.size() << " problem"
                       << (rep.problems.size() == 1 ? "" : "s") << " in " << o.path;
}

}  // namespace

void add_db_commands(CLI::App& app) {
  auto o = std::make_shared<DbOptions>();
  CLI::App* db = app.add_subcommand("db", "query and maintain the tuning database");
  db->require_subcommand(1);
  db->fallthrough();  // --db and --json also after the subcommand
  db->add_option("--db", o->path, "the database file")->capture_default_str();
  db->add_flag("--json", o->json, "print JSON for tools instead of tables");

  auto* list = db->add_subcommand("list", "workloads with their best GFLOP/s per target");
  list->add_option("--target", o->target, "only this target (its canonical string, or a unique start of it: llvm)");
  list->callback([o] { cmd_list(*o); });

  auto* best = db->add_subcommand("best", "the fastest records of a workload on a target");
  best->add_option("workload", o->workload, "workload hash, hash prefix or op name")->required();
  best->add_option("--target", o->target, "target (needed when several have records)");
  best->add_option("-k,--top", o->top, "how many records")->capture_default_str();
  for (auto* c : {best}) {
    c->add_option("--server", o->server, "query a tuner-server's database (HOST:PORT)");
    c->add_option("--token-file", o->token_file, "the client token of --server");
    c->add_option("--tls-ca", o->tls_ca, "CA certificate (PEM) of a TLS server");
  }
  best->callback([o] { cmd_best(*o); });

  auto* show = db->add_subcommand("show", "one record in full, with its trace");
  show->add_option("record", o->record, "record id")->required()->transform(number_in(1, 1e15));
  show->callback([o] { cmd_show(*o); });

  auto* stats = db->add_subcommand("stats", "records by status, target and worker");
  stats->callback([o] { cmd_stats(*o); });

  auto* exp = db->add_subcommand("export", "write records as JSON lines");
  exp->add_option("-o,--output", o->output, "output file (- for stdout)")
      ->required()
      ->check(nonempty_path());
  exp->add_option("--target", o->target, "only this target (its canonical string, or a unique start of it: llvm)");
  exp->add_flag("--skip-damaged", o->skip_damaged,
                "export the readable records of a damaged database, warning about the others");
  exp->add_option("--server", o->server, "export a tuner-server's database (HOST:PORT)");
  exp->add_option("--token-file", o->token_file, "the client token of --server");
  exp->add_option("--tls-ca", o->tls_ca, "CA certificate (PEM) of a TLS server");
  exp->callback([o] { cmd_export(*o); });

  auto* imp = db->add_subcommand("import", "add the records of a JSON-lines file");
  imp->add_option("file", o->file, "a file written by `tuner db export` (- for stdin)")->required();
  imp->add_option("--server", o->server, "import into a tuner-server's database (HOST:PORT)");
  imp->add_option("--token-file", o->token_file, "the client token of --server");
  imp->add_option("--tls-ca", o->tls_ca, "CA certificate (PEM) of a TLS server");
  imp->callback([o] { cmd_import(*o); });

  auto* prune = db->add_subcommand(
      "prune", "keep only the fastest records (and the latest validation and in-model timing "
               "of each workload, which compile chooses by)");
  prune->add_option("--keep", o->keep, "measured records to keep per workload and target")->required();
  prune->callback([o] { cmd_prune(*o); });

  auto* verify = db->add_subcommand("verify", "integrity check and workload re-hash");
  verify->callback([o] { cmd_verify(*o); });
}

}  // namespace tuner::cli
