#include "search/validate.h"

#include <set>

#include "codegen/default_schedule.h"
#include "support/json.h"

namespace tuner::search {

int validate_best(const std::vector<TuneTask>& tasks, const ValidateOptions& opts,
                  db::Database& db, measure::Builder& builder, measure::Runner& runner,
                  const std::function<void(size_t, size_t)>& on_task,
                  const std::function<bool()>& should_stop) {
  int committed = 0;
  for (size_t t = 0; t < tasks.size(); ++t) {
    const TuneTask& task = tasks[t];
    if (should_stop && should_stop()) break;
    if (on_task) on_task(t, tasks.size());
    auto w = db.find_workload(task.dag.hash_hex());
    if (!w) continue;
    const std::string target = task.target.str();
    // The fastest distinct schedules, then the fallback (unless it is one of them).
    std::vector<schedule::Trace> traces;
    std::set<std::string> seen;
    for (auto& r : db.top_k(w->id, target, 4 * opts.top)) {
      if (int(traces.size()) == opts.top) break;
      if (!seen.insert(r.trace).second) continue;
      try {
        traces.push_back(schedule::Trace::from_json(parse_json(r.trace)));
      } catch (const std::exception&) {
        // Written by another Tuner version: not a candidate here.
      }
    }
    schedule::Trace fallback = codegen::default_schedule(task.dag, task.target).trace();
    if (seen.insert(fallback.to_json().dump()).second) traces.push_back(fallback);
    if (traces.size() < 2) continue;

    auto built = builder.build(task.dag, traces, task.target);
    measure::MeasureTask mtask{task.dag, task.target, 0, task.inputs, {}};
    // One commit per task: compile compares the schedules of its latest validation only.
    std::vector<db::Record> records;
    for (int round = 0; round < opts.rounds; ++round) {
      // A different candidate goes first each round: none always follows the same one.
      std::vector<measure::BuiltCandidate> order;
      std::vector<size_t> index;
      for (size_t k = 0; k < built.size(); ++k) {
        index.push_back((k + size_t(round)) % built.size());
        order.push_back(built[index.back()]);
      }
      auto results = runner.run(mtask, order);
      for (size_t k = 0; k < results.size(); ++k)
        records.push_back(make_record(w->id, target, traces[index[k]], results[k],
                                      std::string(db::kValidationWorker), std::nullopt));
    }
    committed += int(db.commit_round(records).inserted);
  }
  return committed;
}

}  // namespace tuner::search
