// Which process works on a tuning run: two `tuner tune` commands of one model at once must not
// both resume the same run (each counted the other's trials as its own, and the run ended with
// more records than its budget).
#pragma once

#include "support/json.h"

namespace tuner::cli {

/// This process as other processes of this machine can recognise it: host name, pid and the
/// pid's start time (pids are reused).
Json this_process();

/// Whether `owner` (a this_process() value, kept in a run's progress) is a process still
/// running on this machine; false for another machine's (nothing to check from here) and for
/// anything malformed.
bool process_alive(const Json& owner);

/// A run's `sessions` (the spans [start, end] in ms processes worked on it, which the report's
/// wall times keep to) from its stored progress, with this process's, since `started_ms`, last.
Json run_sessions(const Json& stored_progress, int64_t started_ms);

}  // namespace tuner::cli
