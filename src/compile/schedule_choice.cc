#include "compile/schedule_choice.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>

#include "codegen/default_schedule.h"
#include "db/sqlite_database.h"
#include "support/json.h"

namespace tuner::compile {

std::unique_ptr<db::Database> open_db_if_present(const std::string& db_path) {
  if (db_path.empty()) return nullptr;
  db::check_database_path(db_path);  // refused, not taken as absent
  struct stat st;
  if (stat(db_path.c_str(), &st) != 0) return nullptr;
  db::SqliteOptions o;
  o.mode = db::OpenMode::ReadOnly;
  return db::SqliteDatabase::open(db_path, o);
}

namespace {

// A workload's ok records on `target` re-measured after tuning: by the sandbox's validation
// and timed inside the model.
struct Remeasured {
  std::vector<db::Record> validated, in_model;
};

Remeasured remeasured(db::Database& db, int64_t workload_id, const std::string& target) {
  Remeasured out;
  db::RecordFilter f;
  f.workload_id = workload_id;
  f.target = target;
  f.status = db::MeasureStatus::Ok;
  f.skip_unreadable = true;
  db.for_each_record(f, [&](const db::Workload&, const db::Record& r) {
    if (!r.median) return;
    if (r.worker == db::kValidationWorker) out.validated.push_back(r);
    else if (r.worker == db::kModelWorker) out.in_model.push_back(r);
  });
  return out;
}

// The traces of one commit of `records` (one kind of Remeasured) that replay on `dag`, by
// the median of their records' medians, fastest first; at most `limit`. Only the latest
// commit with a trace that replays counts: each is a paired experiment, all schedules in
// turn, in the same minutes, by one build of Tuner; one from another day or another build
// does not compare with it. A later commit none of whose traces replay (imported from
// another Tuner version) does not hide it.
struct Ranked {
  double median;
  ChosenSchedule choice;
};

struct Ranking {
  int64_t commit = 0;  // created_ms of the records ranked; 0 when there are none
  std::vector<Ranked> ranked;
};

Ranking ranked_choices(const te::ComputeDAG& dag, const std::vector<db::Record>& records,
                       const char* how, size_t limit) {
  struct Seen {
    int64_t first_id;
    std::vector<double> medians;
  };
  std::map<int64_t, std::map<std::string, Seen>, std::greater<>> commits;
  for (const db::Record& r : records) {
    auto [it, fresh] = commits[r.created_ms].try_emplace(r.trace, Seen{r.id, {}});
    it->second.medians.push_back(*r.median);
  }
  for (auto& [commit, by_trace] : commits) {
    std::vector<std::pair<double, const std::string*>> order;
    for (auto& [trace, seen] : by_trace) order.emplace_back(db::median_of(seen.medians), &trace);
    std::sort(order.begin(), order.end());
    Ranking out{commit, {}};
    for (auto& [median, trace] : order) {
      if (out.ranked.size() >= limit) break;
      try {
        auto t = schedule::Trace::from_json(parse_json(*trace));
        out.ranked.push_back({median,
                              {schedule::Schedule::replay(dag, t),
                               "database record #" + std::to_string(by_trace[*trace].first_id) +
                                   " (" + how + ")",
                               true}});
      } catch (const std::exception&) {
        // Written by another Tuner version: the next one.
      }
    }
    if (!out.ranked.empty()) return out;
  }
  return {};
}

// The ranked choice whose schedule is `trace`, if any.
const Ranked* find_trace(const std::vector<Ranked>& ranked, const schedule::Trace& trace) {
  for (const auto& r : ranked)
    if (r.choice.sched.trace() == trace) return &r;
  return nullptr;
}

// The first of `ranked` (the fallback, not a tuned record, when it is the fallback), marked
// when this Tuner's fallback is not among them.
ChosenSchedule first_choice(std::vector<Ranked>& ranked, const schedule::Schedule& fallback) {
  const Ranked* f = find_trace(ranked, fallback.trace());
  if (f == &ranked[0]) return ChosenSchedule{fallback, "fallback (the fastest again)", false};
  ChosenSchedule c = std::move(ranked[0].choice);
  c.against_other_fallback = !f;
  if (c.against_other_fallback) c.source += ", timed against another fallback";
  return c;
}

// The fastest schedule of the latest timing inside the model, unless the fallback, timed
// there too, is within kInModelMargin of it: then the fallback.
ChosenSchedule in_model_choice(std::vector<Ranked>& timed, schedule::Schedule fallback) {
  const Ranked* f = find_trace(timed, fallback.trace());
  if (f && !beats_fallback_in_model(timed[0].median, f->median))
    return ChosenSchedule{std::move(fallback),
                          "fallback (no schedule " + std::to_string(int(kInModelMargin * 100)) +
                              " % faster in the model)",
                          false};
  return first_choice(timed, fallback);
}

}  // namespace

bool beats_fallback_in_model(double sched_median, double fallback_median) {
  return sched_median < fallback_median * (1 - kInModelMargin);
}

ChosenSchedule choose_schedule(const te::ComputeDAG& dag, const codegen::Target& target,
                               db::Database* db, bool in_model) {
  bool stale = false;
  if (db) {
    if (auto w = db->find_workload(dag.hash_hex())) {
      // A timing in the model older than the latest validation compared other candidates
      // (a later `tune --no-compile` validated again): the validation decides then.
      Remeasured r = remeasured(*db, w->id, target.str());
      Ranking validated = ranked_choices(dag, r.validated, "validated", SIZE_MAX);
      if (in_model) {
        Ranking timed = ranked_choices(dag, r.in_model, "faster in the model", SIZE_MAX);
        if (!timed.ranked.empty() && timed.commit >= validated.commit)
          return in_model_choice(timed.ranked, codegen::default_schedule(dag, target));
      }
      if (!validated.ranked.empty())
        return first_choice(validated.ranked, codegen::default_schedule(dag, target));
      auto top = db->top_k(w->id, target.str(), 3);
      for (auto& r : top) {
        try {
          auto trace = schedule::Trace::from_json(parse_json(r.trace));
          schedule::Schedule fallback = codegen::default_schedule(dag, target);
          // The fallback's own record (each task's first trial) is not a tuned schedule.
          if (trace == fallback.trace())
            return {std::move(fallback), "fallback (its record #" + std::to_string(r.id) + " is the fastest)", false};
          return {schedule::Schedule::replay(dag, trace),
                  "database record #" + std::to_string(r.id), true};
        } catch (const std::exception&) {
          // Written by another Tuner version: try the next one, then fall back.
        }
      }
      stale = !top.empty();
    }
  }
  return {codegen::default_schedule(dag, target),
          target.is_cuda() ? "fallback (GPU)" : "fallback", false, stale};
}

std::optional<ValidatedTimes> validated_times(const te::ComputeDAG& dag,
                                              const codegen::Target& target, db::Database& db) {
  auto w = db.find_workload(dag.hash_hex());
  if (!w) return std::nullopt;
  auto ranked = ranked_choices(dag, remeasured(db, w->id, target.str()).validated, "validated",
                               SIZE_MAX)
                    .ranked;
  const Ranked* f = find_trace(ranked, codegen::default_schedule(dag, target).trace());
  if (!f) return std::nullopt;
  return ValidatedTimes{f->median, ranked[0].median};
}

std::vector<ChosenSchedule> validated_schedules(const te::ComputeDAG& dag,
                                                const codegen::Target& target, db::Database& db,
                                                size_t limit) {
  auto w = db.find_workload(dag.hash_hex());
  if (!w) return {};
  std::vector<ChosenSchedule> out;
  auto validated = remeasured(db, w->id, target.str()).validated;
  for (auto& r : ranked_choices(dag, validated, "validated", limit).ranked)
    out.push_back(std::move(r.choice));
  return out;
}

}  // namespace tuner::compile
