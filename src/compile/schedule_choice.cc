#include "compile/schedule_choice.h"

#include <sys/stat.h>

#include "db/sqlite_database.h"
#include "schedule/fallback.h"
#include "schedule/gpu_fallback.h"

namespace tuner::compile {

std::unique_ptr<db::Database> open_db_if_present(const std::string& db_path) {
  struct stat st;
  if (db_path.empty() || stat(db_path.c_str(), &st) != 0) return nullptr;
  db::SqliteOptions o;
  o.mode = db::OpenMode::ReadOnly;
  return db::SqliteDatabase::open(db_path, o);
}

ChosenSchedule choose_schedule(const te::ComputeDAG& dag, const codegen::Target& target,
                               db::Database* db) {
  if (db) {
    if (auto w = db->find_workload(dag.hash_hex())) {
      for (auto& r : db->top_k(w->id, target.str(), 3)) {
        try {
          auto trace = schedule::Trace::from_json(Json::parse(r.trace));
          return {schedule::Schedule::replay(dag, trace),
                  "database record #" + std::to_string(r.id), true};
        } catch (const std::exception&) {
          // Written by another Tuner version: try the next one, then fall back.
        }
      }
    }
  }
  if (target.is_cuda()) return {schedule::gpu_fallback_schedule(dag), "fallback (GPU)", false};
  schedule::FallbackOptions fo;
  fo.vector_lanes = target.vector_lanes();
  return {schedule::fallback_schedule(dag, fo), "fallback", false};
}

}  // namespace tuner::compile
