#include "db/memory_database.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "db/timestamp.h"
#include "support/error.h"

namespace tuner::db {

namespace {

// The fastest-first order of ok records: median, then id.
bool faster(const Record* a, const Record* b) {
  if (*a->median != *b->median) return *a->median < *b->median;
  return a->id < b->id;
}

}  // namespace

int64_t MemoryDatabase::commit_workload(const Workload& w) {
  check_workload(w);
  std::lock_guard lock(mu_);
  if (auto it = workload_ids_.find(w.hash); it != workload_ids_.end()) {
    USER_CHECK(workloads_.at(it->second).canonical == w.canonical)
        << "workload hash " << w.hash << " is already taken by a different DAG";
    return it->second;
  }
  Workload copy = w;
  copy.id = next_id_++;
  copy.created_ms = now_ms();
  workload_ids_[w.hash] = copy.id;
  workloads_[copy.id] = std::move(copy);
  return workload_ids_[w.hash];
}

std::optional<Workload> MemoryDatabase::workload(int64_t id) {
  std::lock_guard lock(mu_);
  auto it = workloads_.find(id);
  if (it == workloads_.end()) return std::nullopt;
  return it->second;
}

std::optional<Workload> MemoryDatabase::find_workload(std::string_view hash) {
  std::lock_guard lock(mu_);
  auto it = workload_ids_.find(std::string(hash));
  if (it == workload_ids_.end()) return std::nullopt;
  return workloads_.at(it->second);
}

std::vector<Workload> MemoryDatabase::workloads() {
  std::lock_guard lock(mu_);
  std::vector<Workload> out;
  for (auto& [hash, id] : workload_ids_) out.push_back(workloads_.at(id));
  return out;
}

int64_t MemoryDatabase::ensure_target(const std::string& name) {
  auto [it, fresh] = targets_.try_emplace(name);
  if (fresh) {
    it->second.id = next_id_++;
    it->second.name = name;
  }
  return it->second.id;
}

int64_t MemoryDatabase::commit_target(const Target& t) {
  USER_CHECK(!t.name.empty()) << "a target needs a name";
  USER_CHECK(t.hardware.is_object()) << "target hardware parameters must be a JSON object";
  std::lock_guard lock(mu_);
  int64_t id = ensure_target(t.name);
  targets_[t.name].hardware = t.hardware;
  return id;
}

std::vector<Target> MemoryDatabase::targets() {
  std::lock_guard lock(mu_);
  std::vector<Target> out;
  for (auto& [name, t] : targets_) out.push_back(t);
  return out;
}

CommitResult MemoryDatabase::commit_round(std::span<const Record> round) {
  std::vector<Record> rs(round.begin(), round.end());
  int64_t now = now_ms();
  for (Record& r : rs) {
    check_record(r);
    r.trace = compact_trace(r.trace);
    r.median = r.status == MeasureStatus::Ok ? std::optional(median_of(r.times)) : std::nullopt;
    if (r.created_ms == 0) r.created_ms = now;
  }
  std::lock_guard lock(mu_);
  // Check everything first: a failing round leaves nothing behind.
  for (Record& r : rs) {
    auto w = workloads_.find(r.workload_id);
    USER_CHECK(w != workloads_.end()) << "record names unknown workload id " << r.workload_id;
    USER_CHECK(!r.run_id || runs_.count(*r.run_id))
        << "record names unknown tuning run " << *r.run_id;
    r.key = record_key(r, w->second.hash);
  }
  CommitResult out;
  for (Record& r : rs) {
    if (auto it = record_keys_.find(r.key); it != record_keys_.end()) {
      out.ids.push_back(it->second);
      continue;
    }
    ensure_target(r.target);
    r.id = next_id_++;
    record_keys_[r.key] = r.id;
    out.ids.push_back(r.id);
    ++out.inserted;
    records_[r.id] = std::move(r);
  }
  return out;
}

std::vector<Record> MemoryDatabase::top_k(int64_t workload_id, std::string_view target, int k) {
  std::lock_guard lock(mu_);
  std::vector<const Record*> ok;
  for (auto& [id, r] : records_)
    if (r.workload_id == workload_id && r.target == target && r.status == MeasureStatus::Ok &&
        measured_alone(r))
      ok.push_back(&r);
  std::sort(ok.begin(), ok.end(), faster);
  std::vector<Record> out;
  for (size_t i = 0; i < ok.size() && int(i) < k; ++i) out.push_back(*ok[i]);
  return out;
}

std::optional<Record> MemoryDatabase::record(int64_t id) {
  std::lock_guard lock(mu_);
  auto it = records_.find(id);
  if (it == records_.end()) return std::nullopt;
  return it->second;
}

bool MemoryDatabase::matches(const Record& r, const RecordFilter& f) const {
  return (!f.workload_id || r.workload_id == *f.workload_id) &&
         (!f.target || r.target == *f.target) && (!f.status || r.status == *f.status) &&
         (!f.run_id || r.run_id == f.run_id);
}

int64_t MemoryDatabase::count_records(const RecordFilter& f) {
  std::lock_guard lock(mu_);
  int64_t n = 0;
  for (auto& [id, r] : records_) n += matches(r, f);
  return n;
}

std::vector<Record> MemoryDatabase::ok_records(std::string_view target, int64_t after_id) {
  std::lock_guard lock(mu_);
  std::vector<Record> out;
  for (auto it = records_.upper_bound(after_id); it != records_.end(); ++it)
    if (it->second.target == target && it->second.status == MeasureStatus::Ok &&
        measured_alone(it->second))
      out.push_back(it->second);
  return out;
}

void MemoryDatabase::for_each_record(
    const RecordFilter& f, const std::function<void(const Workload&, const Record&)>& visit) {
  std::lock_guard lock(mu_);
  std::vector<const Record*> rs;
  for (auto& [id, r] : records_)
    if (matches(r, f)) rs.push_back(&r);
  auto order = [&](const Record* r) {
    return std::tie(workloads_.at(r->workload_id).hash, r->target, r->created_ms, r->key);
  };
  std::sort(rs.begin(), rs.end(), [&](auto* a, auto* b) { return order(a) < order(b); });
  for (const Record* r : rs) visit(workloads_.at(r->workload_id), *r);
}

std::vector<WorkloadSummary> MemoryDatabase::summaries() {
  std::lock_guard lock(mu_);
  std::map<std::pair<std::string, std::string>, WorkloadSummary> rows;  // (hash, target)
  for (auto& [id, r] : records_) {
    WorkloadSummary& s = rows[{workloads_.at(r.workload_id).hash, r.target}];
    s.workload_id = r.workload_id;
    s.target = r.target;
    ++s.records;
    if (r.status != MeasureStatus::Ok) continue;
    ++s.ok_records;
    if (measured_alone(r) && (!s.best_median || *r.median < *s.best_median))
      s.best_median = r.median;
  }
  std::vector<WorkloadSummary> out;
  for (auto& [k, s] : rows) out.push_back(s);
  return out;
}

DbStats MemoryDatabase::stats() {
  std::lock_guard lock(mu_);
  DbStats s;
  s.workloads = int64_t(workloads_.size());
  s.targets = int64_t(targets_.size());
  s.records = int64_t(records_.size());
  s.tuning_runs = int64_t(runs_.size());
  s.cost_models = int64_t(models_.size());
  std::map<std::string, int64_t> status, target, worker;
  for (auto& [id, r] : records_) {
    ++status[status_name(r.status)];
    ++target[r.target];
    ++worker[r.worker];
  }
  s.by_status.assign(status.begin(), status.end());
  s.by_target.assign(target.begin(), target.end());
  s.by_worker.assign(worker.begin(), worker.end());
  return s;
}

int64_t MemoryDatabase::prune(int keep) {
  USER_CHECK(keep >= 1) << "prune must keep at least 1 record per workload and target, not "
                        << keep;
  std::lock_guard lock(mu_);
  // The fastest tuning records, and the records of the latest validation and in-model
  // timing of each (workload, target), which compile chooses by.
  std::map<std::pair<int64_t, std::string>, std::vector<const Record*>> groups;
  std::map<std::tuple<int64_t, std::string, std::string>, int64_t> latest;
  auto timing = [](const Record& r) {
    return r.worker == kValidationWorker || r.worker == kModelWorker;
  };
  for (auto& [id, r] : records_) {
    if (r.status != MeasureStatus::Ok) continue;
    if (!timing(r)) groups[{r.workload_id, r.target}].push_back(&r);
    if (timing(r)) {
      int64_t& t = latest[{r.workload_id, r.target, r.worker}];
      t = std::max(t, r.created_ms);
    }
  }
  std::set<int64_t> kept;
  for (auto& [k, rs] : groups) {
    std::sort(rs.begin(), rs.end(), faster);
    for (size_t i = 0; i < rs.size() && int(i) < keep; ++i) kept.insert(rs[i]->id);
  }
  for (auto& [id, r] : records_)
    if (r.status == MeasureStatus::Ok && timing(r) &&
        r.created_ms == latest[{r.workload_id, r.target, r.worker}])
      kept.insert(id);
  int64_t deleted = 0;
  for (auto it = records_.begin(); it != records_.end();) {
    if (kept.count(it->first)) {
      ++it;
      continue;
    }
    record_keys_.erase(it->second.key);
    it = records_.erase(it);
    ++deleted;
  }
  return deleted;
}

int64_t MemoryDatabase::create_run(std::string_view what, const Json& args) {
  std::lock_guard lock(mu_);
  TuningRun r;
  r.id = next_id_++;
  r.what = what;
  r.args = args;
  r.started_ms = now_ms();
  runs_[r.id] = r;
  return r.id;
}

void MemoryDatabase::update_run(int64_t id, RunState state, const Json& progress) {
  std::lock_guard lock(mu_);
  auto it = runs_.find(id);
  USER_CHECK(it != runs_.end()) << "no tuning run " << id;
  it->second.state = state;
  it->second.progress = progress;
  it->second.finished_ms =
      state == RunState::Running ? std::nullopt : std::optional<int64_t>(now_ms());
}

std::optional<TuningRun> MemoryDatabase::run(int64_t id) {
  std::lock_guard lock(mu_);
  auto it = runs_.find(id);
  if (it == runs_.end()) return std::nullopt;
  return it->second;
}

std::vector<TuningRun> MemoryDatabase::runs() {
  std::lock_guard lock(mu_);
  std::vector<TuningRun> out;
  for (auto it = runs_.rbegin(); it != runs_.rend(); ++it) out.push_back(it->second);
  std::stable_sort(out.begin(), out.end(),
                   [](auto& a, auto& b) { return a.started_ms > b.started_ms; });
  return out;
}

void MemoryDatabase::save_cost_model(const CostModelBlob& m) {
  USER_CHECK(!m.target.empty() && !m.kind.empty()) << "a cost model needs a target and a kind";
  std::lock_guard lock(mu_);
  ensure_target(m.target);
  CostModelBlob copy = m;
  copy.created_ms = now_ms();
  models_[{m.target, m.feature_version, m.kind}] = std::move(copy);
}

std::optional<CostModelBlob> MemoryDatabase::load_cost_model(std::string_view target,
                                                             int feature_version,
                                                             std::string_view kind) {
  std::lock_guard lock(mu_);
  auto it = models_.find({std::string(target), feature_version, std::string(kind)});
  if (it == models_.end()) return std::nullopt;
  return it->second;
}

}  // namespace tuner::db
