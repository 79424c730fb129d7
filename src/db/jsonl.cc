#include "db/jsonl.h"

#include <istream>
#include <map>
#include <ostream>

#include "db/timestamp.h"
#include "support/error.h"
#include "support/json.h"

namespace tuner::db {

namespace {

constexpr const char* kFormat = "tuner-record";

const Json& field(const Json& j, const char* key, Json::value_t type) {
  auto it = j.find(key);
  USER_CHECK(it != j.end()) << "missing \"" << key << "\"";
  bool ok = it->type() == type || (type == Json::value_t::number_float && it->is_number()) ||
            (type == Json::value_t::number_integer && it->is_number_integer());
  USER_CHECK(ok) << "\"" << key << "\" has the wrong type (" << it->type_name() << ")";
  return *it;
}

std::string str(const Json& j, const char* key) {
  return field(j, key, Json::value_t::string).get<std::string>();
}
double num(const Json& j, const char* key) {
  return field(j, key, Json::value_t::number_float).get<double>();
}
int64_t integer(const Json& j, const char* key) {
  return field(j, key, Json::value_t::number_integer).get<int64_t>();
}

}  // namespace

std::string record_to_line(const Workload& w, const Record& r) {
  Json wl = Json::object();
  wl["hash"] = w.hash;
  wl["op"] = w.op;
  wl["params"] = w.params;
  wl["shapes"] = w.shapes;
  wl["flops"] = w.flops;
  wl["canonical"] = w.canonical;
  Json j = Json::object();
  j["format"] = kFormat;
  j["version"] = kJsonlVersion;
  j["workload"] = std::move(wl);
  j["target"] = r.target;
  j["trace_version"] = r.trace_version;
  j["trace"] = parse_json(r.trace);
  j["status"] = status_name(r.status);
  j["times"] = r.times;
  j["median"] = r.median ? Json(*r.median) : Json(nullptr);
  j["error"] = r.error;
  j["build_seconds"] = r.build_seconds;
  j["run_seconds"] = r.run_seconds;
  j["worker"] = r.worker;
  j["tuner_version"] = r.tuner_version;
  j["feature_version"] = r.feature_version;
  j["created"] = format_time(r.created_ms);
  return j.dump();
}

ParsedLine record_from_line(const std::string& line) {
  // parse_json's own check, said apart from invalid JSON (the line is scanned once).
  USER_CHECK(json_nesting(line) <= kMaxJsonNesting) << "JSON nested deeper than " << kMaxJsonNesting << " levels";
  Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  USER_CHECK(!j.is_discarded()) << "not valid JSON";
  USER_CHECK(j.is_object()) << "not a JSON object";
  auto format = j.find("format");
  USER_CHECK(format != j.end() && format->is_string() && *format == kFormat)
      << "not a tuner record (\"format\" is not \"" << kFormat << "\")";
  int64_t version = integer(j, "version");
  USER_CHECK(version == kJsonlVersion)
      << "record format version " << version << " is not supported (this tuner reads "
      << kJsonlVersion << ")";
  ParsedLine p;
  const Json& wl = field(j, "workload", Json::value_t::object);
  p.workload.hash = str(wl, "hash");
  p.workload.op = str(wl, "op");
  p.workload.params = str(wl, "params");
  p.workload.shapes = field(wl, "shapes", Json::value_t::array);
  p.workload.flops = num(wl, "flops");
  p.workload.canonical = str(wl, "canonical");
  check_workload(p.workload);

  Record& r = p.record;
  r.target = str(j, "target");
  USER_CHECK(!r.target.empty()) << "empty \"target\"";
  int64_t tv = integer(j, "trace_version");
  USER_CHECK(tv > 0 && tv < (1 << 30)) << "bad \"trace_version\" " << tv;
  r.trace_version = int(tv);
  auto trace = j.find("trace");
  USER_CHECK(trace != j.end()) << "missing \"trace\"";
  r.trace = trace->dump();
  auto status = parse_status(str(j, "status"));
  USER_CHECK(status) << "unknown status \"" << str(j, "status") << "\"";
  r.status = *status;
  for (auto& t : field(j, "times", Json::value_t::array)) {
    USER_CHECK(t.is_number()) << "\"times\" holds a non-number";
    r.times.push_back(t.get<double>());
  }
  // Recomputed from "times", never trusted; but a value of another type is a damaged line.
  auto median = j.find("median");
  USER_CHECK(median == j.end() || median->is_null() || median->is_number())
      << "\"median\" is neither a number nor null";
  r.error = str(j, "error");
  r.build_seconds = num(j, "build_seconds");
  r.run_seconds = num(j, "run_seconds");
  r.worker = str(j, "worker");
  r.tuner_version = str(j, "tuner_version");
  int64_t fv = integer(j, "feature_version");
  USER_CHECK(fv >= 0 && fv < (1 << 30)) << "bad \"feature_version\" " << fv;
  r.feature_version = int(fv);
  auto created = parse_time(str(j, "created"));
  USER_CHECK(created) << "\"created\" is not a time like 2026-11-22T03:34:51.123Z";
  r.created_ms = *created;
  r.workload_id = 1;  // checked below as if committed; reset after
  check_record(r);
  r.workload_id = 0;
  return p;
}

int64_t export_jsonl(Database& db, std::ostream& out, const ExportOptions& options) {
  RecordFilter f;
  f.target = options.target;
  f.skip_unreadable = options.skip_damaged;
  int64_t n = 0;
  db.for_each_record(f, [&](const Workload& w, const Record& r) {
    USER_CHECK(!options.stop || !options.stop()) << "export interrupted";
    out << record_to_line(w, r) << '\n';
    ++n;
  });
  out.flush();  // the caller checks its stream: it knows what it writes to
  return n;
}

ImportReport import_jsonl(Database& db, std::istream& in, const ImportOptions& options) {
  ImportReport rep;
  std::vector<Record> batch;
  struct Known {
    int64_t id;    // in `db`
    double flops;  // as `db` has it (a line's own number may differ)
  };
  std::map<std::string, Known> known;  // by workload hash
  auto flush = [&] {
    if (batch.empty()) return;
    CommitResult c = db.commit_round(batch);
    rep.inserted += c.inserted;
    rep.duplicates += int64_t(batch.size()) - c.inserted;
    batch.clear();
  };
  std::string line;
  for (int64_t n = 1; std::getline(in, line); ++n) {
    if (options.stop && options.stop()) {
      rep.stopped = true;
      break;
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    ++rep.lines;
    try {
      ParsedLine p = record_from_line(line);
      if (options.check) options.check(p.workload, p.record);
      auto it = known.find(p.workload.hash);
      if (it == known.end()) {
        auto stored = db.find_workload(p.workload.hash);
        it = known.emplace(p.workload.hash, stored ? Known{stored->id, stored->flops}
                                                   : Known{0, p.workload.flops}).first;
      }
      std::string why = times_problem(p.record.status, p.record.times, it->second.flops);
      USER_CHECK(why.empty()) << why;
      if (!it->second.id) it->second.id = db.commit_workload(p.workload);  // a good line's only
      p.record.workload_id = it->second.id;
      batch.push_back(std::move(p.record));
    } catch (const UserError& e) {
      rep.bad.push_back({n, e.what()});
      continue;
    } catch (const Json::exception& e) {  // a field of an unexpected type
      rep.bad.push_back({n, e.what()});
      continue;
    }
    if (int(batch.size()) >= options.batch) flush();
  }
  flush();
  return rep;
}

}  // namespace tuner::db
