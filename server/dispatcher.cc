#include "server/dispatcher.h"

#include <fmt/format.h>

#include <algorithm>

#include "server/wire.h"
#include "support/log.h"
#include "support/stopped_time.h"

namespace tuner::server {

namespace {

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

}  // namespace

Dispatcher::Dispatcher(DispatcherOptions opts) : opts_(opts) {
  // Worker ids differ between server runs, so a worker from before a restart is told to
  // register again rather than colliding with a new one.
  next_worker_ = uint64_t(std::chrono::system_clock::now().time_since_epoch().count()) % 100000 * 1000;
  reaper_ = std::thread([this] { reap_loop(); });
}

Dispatcher::~Dispatcher() {
  {
    std::lock_guard lk(mu_);
    stopping_ = true;
    for (auto& [id, it] : items_)
      it.promise.set_value(measure::make_error(db::MeasureStatus::Unknown, "server shutting down"));
    items_.clear();
    by_key_.clear();
    pending_.clear();
  }
  stop_cv_.notify_all();
  work_cv_.notify_all();
  reaper_.join();
}

std::vector<std::shared_future<measure::MeasureResult>> Dispatcher::submit(std::vector<Work> batch) {
  std::vector<std::shared_future<measure::MeasureResult>> out;
  {
    std::lock_guard lk(mu_);
    size_t fresh = 0, bytes = 0;
    for (const auto& w : batch)
      if (!by_key_.count({w.job, w.candidate})) {
        ++fresh;
        bytes += w.artifact ? w.artifact->size() : 0;
      }
    // An empty queue takes any batch: one larger than the limits (a round of 16 at
    // --max-queue 8) would otherwise wait for room that never comes.
    if (!items_.empty() && (items_.size() + fresh > opts_.max_queue ||
                            (fresh && queued_bytes_ + bytes > opts_.max_queue_bytes)))
      throw QueueFull(fmt::format("the measurement queue is full ({} items, {} MiB)",
                                  items_.size(), queued_bytes_ >> 20));
    queued_bytes_ += bytes;
    for (auto& w : batch) {
      if (auto k = by_key_.find({w.job, w.candidate}); k != by_key_.end()) {
        out.push_back(items_.at(k->second).future);
        continue;
      }
      uint64_t id = next_item_++;
      Item& it = items_[id];
      it.id = id;
      it.future = it.promise.get_future().share();
      by_key_[{w.job, w.candidate}] = id;
      it.work = std::move(w);
      pending_.push_back(id);
      out.push_back(it.future);
    }
  }
  work_cv_.notify_all();
  return out;
}

void Dispatcher::finish(uint64_t id, measure::MeasureResult r) {
  auto found = items_.find(id);
  if (found == items_.end()) return;
  Item& it = found->second;
  if (!it.leased_to.empty())
    if (auto w = workers_.find(it.leased_to); w != workers_.end()) w->second.leases.erase(id);
  pending_.erase(std::remove(pending_.begin(), pending_.end(), id), pending_.end());
  by_key_.erase({it.work.job, it.work.candidate});
  queued_bytes_ -= it.work.artifact ? it.work.artifact->size() : 0;
  it.promise.set_value(std::move(r));
  items_.erase(found);
}

void Dispatcher::finish_job(const std::string& job, const measure::MeasureResult& r) {
  std::vector<uint64_t> ids;
  for (auto& [id, it] : items_)
    if (it.work.job == job) ids.push_back(id);
  for (uint64_t id : ids) finish(id, r);
}

void Dispatcher::cancel_job(const std::string& job) {
  std::lock_guard lk(mu_);
  job_errors_.erase(job);
  finish_job(job, measure::make_error(db::MeasureStatus::Unknown, "cancelled"));
}

std::optional<std::string> Dispatcher::take_job_error(const std::string& job) {
  std::lock_guard lk(mu_);
  auto it = job_errors_.find(job);
  if (it == job_errors_.end()) return std::nullopt;
  std::string e = std::move(it->second);
  job_errors_.erase(it);
  return e;
}

std::string Dispatcher::register_worker(const std::string& target, const std::string& device_key,
                                        const std::string& hardware, const std::string& version,
                                        bool emulated) {
  std::lock_guard lk(mu_);
  std::string id = fmt::format("w{}", next_worker_++);
  Worker& w = workers_[id];
  w.view = {id, target, device_key, hardware, version, "alive", emulated, 0, 0, 0};
  w.last_seen = Clock::now();
  tuner::log(LogLevel::Info, "worker {} registered: target {}, device {}{}", id, target,
             device_key, emulated ? " (emulated)" : "");
  return id;
}

Dispatcher::Worker* Dispatcher::live_worker(const std::string& id) {
  auto w = workers_.find(id);
  return w == workers_.end() || !w->second.alive ? nullptr : &w->second;
}

bool Dispatcher::heartbeat(const std::string& worker_id) {
  std::lock_guard lk(mu_);
  Worker* w = live_worker(worker_id);
  if (!w) return false;
  w->last_seen = Clock::now();
  return true;
}

std::optional<std::vector<rpc::Lease>> Dispatcher::pull(const std::string& worker_id, int max,
                                                        double wait_s) {
  std::unique_lock lk(mu_);
  // Bounded well inside the heartbeat timeout: a worker waiting here is not lost. NaN: 0.
  double max_wait = std::min(30.0, opts_.heartbeat_timeout_s / 2);
  auto end = Clock::now() + seconds(wait_s > 0 ? std::min(wait_s, max_wait) : 0.0);
  std::vector<rpc::Lease> leases;
  while (true) {
    Worker* w = live_worker(worker_id);
    if (!w || stopping_) return std::nullopt;
    w->last_seen = Clock::now();
    for (auto p = pending_.begin(); p != pending_.end() && int(leases.size()) < max;) {
      Item& it = items_.at(*p);
      if (it.work.target != w->view.target) {
        ++p;
        continue;
      }
      p = pending_.erase(p);
      ++it.attempt;
      it.leased_to = worker_id;
      w->leases.insert(it.id);
      rpc::Lease& l = leases.emplace_back();
      l.set_job(it.work.job);
      l.set_candidate(it.work.candidate);
      l.set_attempt(it.attempt);
      l.set_task_key(it.work.task->key());
      l.set_artifact(*it.work.artifact);
      l.set_symbol(it.work.symbol);
      if (it.work.gpu) *l.mutable_gpu() = to_proto(*it.work.gpu);
      l.set_timeout_s(it.work.timeout_s);
      double life = it.work.timeout_s + opts_.lease_margin_s;
      it.lease_has_task = w->tasks_sent.insert(it.work.task->key()).second;
      if (it.lease_has_task) {
        *l.mutable_task() = *it.work.task;
        life += opts_.prepare_allowance_s;
      }
      l.set_deadline_s(life);
      it.leased_at = Clock::now();
      it.deadline = it.leased_at + seconds(life);
    }
    if (!leases.empty() || Clock::now() >= end) break;
    work_cv_.wait_until(lk, end);
  }
  return leases;
}

ReportOutcome Dispatcher::report(const std::string& worker_id, const std::string& job,
                                 const std::string& candidate, int attempt,
                                 measure::MeasureResult r, bool task_missing,
                                 const std::string& task_error) {
  std::lock_guard lk(mu_);
  // A lost worker's leases were re-queued: nothing it reports can be current.
  Worker* w = live_worker(worker_id);
  if (!w) return {false, "unknown or lost worker", /*known_worker=*/false};
  w->last_seen = Clock::now();
  auto k = by_key_.find({job, candidate});
  if (k == by_key_.end()) return {false, "no such pending measurement (duplicate or cancelled)"};
  Item& it = items_.at(k->second);
  if (it.attempt != attempt || it.leased_to != worker_id)
    return {false, fmt::format("late report: attempt {} is not the current lease", attempt)};
  if (task_missing) {
    w->tasks_sent.erase(it.work.task->key());
    if (it.lease_has_task) {
      revoke(it, true, "worker " + worker_id + " reported the task missing from a lease that carried it");
      return {false, "the lease carried the task's data"};
    }
    revoke(it, false, "");
    return {false, "the task's data will be sent again"};
  }
  if (!task_error.empty()) {
    tuner::log(LogLevel::Info, "job {} fails: {}", job, task_error);
    job_errors_.emplace(job, task_error);
    finish_job(job, measure::make_error(db::MeasureStatus::Unknown, task_error));
    return {true, ""};
  }
  ++w->view.measurements;
  finish(it.id, std::move(r));
  return {true, ""};
}

void Dispatcher::revoke(Item& it, bool strike, const std::string& why) {
  if (auto w = workers_.find(it.leased_to); w != workers_.end()) w->second.leases.erase(it.id);
  it.leased_to.clear();
  if (strike) ++it.strikes;
  if (it.strikes >= opts_.quarantine_after) {
    tuner::log(LogLevel::Info, "candidate {} of job {} quarantined after {} failed leases ({})",
               it.work.candidate.substr(0, 12), it.work.job, it.strikes, why);
    finish(it.id, measure::make_error(
                      db::MeasureStatus::RuntimeDevice,
                      fmt::format("quarantined: {} leases of it failed (workers lost or "
                                  "misbehaving; last: {})",
                                  it.strikes, why)));
    return;
  }
  pending_.push_front(it.id);  // retries first
  work_cv_.notify_all();
}

bool Dispatcher::deregister(const std::string& worker_id) {
  std::lock_guard lk(mu_);
  Worker* w = live_worker(worker_id);
  if (!w) return false;
  w->alive = false;
  w->view.state = "gone";
  for (uint64_t id : std::set<uint64_t>(w->leases)) revoke(items_.at(id), false, "deregistered");
  tuner::log(LogLevel::Info, "worker {} deregistered", worker_id);
  return true;
}

void Dispatcher::reap_loop() {
  std::unique_lock lk(mu_);
  while (!stopping_) {
    auto wake = Clock::now() + seconds(opts_.reap_interval_s);
    stop_cv_.wait_until(lk, wake);
    if (stopping_) break;
    auto now = Clock::now();
    // The server was stopped (SIGSTOP, Ctrl-Z) or starved: the workers' silence and the
    // leases' time meanwhile are not theirs.
    if (auto lost = time_stopped(wake, now); lost > Clock::duration::zero()) {
      for (auto& [id, w] : workers_) w.last_seen = std::min(now, w.last_seen + lost);
      for (auto& [id, it] : items_)
        if (!it.leased_to.empty() && it.leased_at < wake) it.deadline += lost;
    }
    for (auto& [id, w] : workers_) {
      if (!w.alive || seconds_between(w.last_seen, now) <= opts_.heartbeat_timeout_s) continue;
      w.alive = false;
      w.view.state = "lost";
      tuner::log(LogLevel::Info, "worker {} lost (no heartbeat for {:.1f} s); re-queueing {} leases", id,
               seconds_between(w.last_seen, now), w.leases.size());
      for (uint64_t item : std::set<uint64_t>(w.leases))
        revoke(items_.at(item), true, "worker " + id + " stopped answering");
    }
    std::vector<uint64_t> expired;
    for (auto& [id, it] : items_)
      if (!it.leased_to.empty() && now > it.deadline) expired.push_back(id);
    for (uint64_t id : expired) {
      Item& it = items_.at(id);
      tuner::log(LogLevel::Info, "lease of candidate {} on worker {} expired", it.work.candidate.substr(0, 12),
               it.leased_to);
      revoke(it, true, "lease expired on worker " + it.leased_to);
    }
  }
}

int Dispatcher::alive_workers(const std::string& target) {
  std::lock_guard lk(mu_);
  int n = 0;
  for (auto& [id, w] : workers_) n += w.alive && w.view.target == target;
  return n;
}

std::vector<WorkerView> Dispatcher::workers() {
  std::lock_guard lk(mu_);
  std::vector<WorkerView> out;
  auto now = Clock::now();
  for (auto& [id, w] : workers_) {
    WorkerView v = w.view;
    v.seconds_since_heartbeat = seconds_between(w.last_seen, now);
    v.leases = int(w.leases.size());
    out.push_back(v);
  }
  return out;
}

size_t Dispatcher::queued() {
  std::lock_guard lk(mu_);
  return items_.size();
}

}  // namespace tuner::server
