#include "db/database.h"

namespace tuner::db {

const char* run_state_name(RunState s) {
  switch (s) {
    case RunState::Running: return "running";
    case RunState::Finished: return "finished";
    case RunState::Failed: return "failed";
    case RunState::Interrupted: return "interrupted";
  }
  return "failed";
}

std::optional<RunState> parse_run_state(std::string_view s) {
  for (RunState st :
       {RunState::Running, RunState::Finished, RunState::Failed, RunState::Interrupted})
    if (s == run_state_name(st)) return st;
  return std::nullopt;
}

}  // namespace tuner::db
