// The outcome of measuring one candidate: all repeat times, or one typed error with its
// message (the status enum is the database's, so results are stored without translation).
#pragma once

#include <string>
#include <vector>

#include "db/measure_status.h"

namespace tuner::measure {

struct MeasureResult {
  db::MeasureStatus status = db::MeasureStatus::Unknown;
  /// Empty when status is Ok; otherwise what went wrong, in one line.
  std::string error;
  /// Seconds per kernel call, one entry per repeat (empty unless Ok).
  std::vector<double> times;
  /// Wall time the builder spent on this candidate (lowering + codegen + link).
  double build_seconds = 0;
  /// Wall time of the run request as seen by the parent (spawn, load, check, warm-up, repeats).
  double run_seconds = 0;
  /// Of run_seconds, the time spent inside kernel calls (check, warm-up and timed repeats;
  /// for RUN_TIMEOUT, from the child taking the request to the kill): run_seconds -
  /// kernel_seconds is the measurement overhead.
  double kernel_seconds = 0;
  /// Kernel calls per timed repeat (so a repeat lasts at least min_repeat_ms; cold: at most
  /// protocol::kColdCallsPerRepeat, each timed alone).
  int64_t calls_per_repeat = 0;

  /// True when the candidate built, ran and was correct (times are valid).
  bool ok() const { return status == db::MeasureStatus::Ok; }
  /// Median of times (the cost of the candidate); +infinity when there are none.
  double median() const;
  /// "ok 1.234 ms" or "RUNTIME_DEVICE: killed by SIGSEGV", for logs.
  std::string str() const;
};

/// A failed result with the given status and message.
MeasureResult make_error(db::MeasureStatus status, std::string error);

}  // namespace tuner::measure
