#include "db/record.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "support/error.h"
#include "support/hash.h"
#include "support/json.h"

namespace tuner::db {

double median_of(std::vector<double> times) {
  INTERNAL_CHECK(!times.empty()) << "median of no times";
  size_t n = times.size(), mid = n / 2;
  std::nth_element(times.begin(), times.begin() + mid, times.end());
  double hi = times[mid];
  if (n % 2) return hi;
  double lo = *std::max_element(times.begin(), times.begin() + mid);
  return lo + (hi - lo) / 2;
}

bool valid_duration(double seconds) { return seconds >= 0 && seconds <= kMaxPlausibleSeconds; }

std::string times_problem(MeasureStatus status, const std::vector<double>& times, double flops) {
  if (status != MeasureStatus::Ok) {
    for (double t : times)
      if (!valid_duration(t)) return fmt::format("record time {} is not a finite duration", t);
    return "";
  }
  if (times.empty()) return "an ok record needs at least one time";
  for (double t : times)
    if (!(t > 0 && t <= kMaxPlausibleSeconds))
      return fmt::format("an ok record's times must be positive durations, got {}", t);
  double median = median_of(times);
  if (median < kMinPlausibleSeconds)
    return fmt::format("an ok record's median of {:.3g} s is shorter than a clock cycle", median);
  if (flops > 0) {
    if (flops / median > kMaxPlausibleFlopsPerSecond)
      return fmt::format("a median of {:.3g} s for {:.3g} FLOPs is {:.3g} FLOP/s, faster than any "
                         "device (limit {:.0e})",
                         median, flops, flops / median, kMaxPlausibleFlopsPerSecond);
  }
  return "";
}

void check_record(const Record& r) {
  USER_CHECK(r.workload_id > 0) << "record has no workload";
  USER_CHECK(!r.target.empty()) << "record has no target";
  USER_CHECK(r.trace_version > 0) << "record has no trace version";
  USER_CHECK(Json::accept(r.trace)) << "record trace is not valid JSON";
  std::string why = times_problem(r.status, r.times);
  USER_CHECK(why.empty()) << why;
  USER_CHECK(valid_duration(r.build_seconds)) << "record build seconds is not a duration";
  USER_CHECK(valid_duration(r.run_seconds)) << "record run seconds is not a duration";
  USER_CHECK(r.created_ms >= 0) << "record creation time is negative";
}

std::string compact_trace(std::string_view trace_json) {
  Json j = parse_json(trace_json, false);
  USER_CHECK(!j.is_discarded()) << "record trace is not valid JSON (or nested deeper than " << kMaxJsonNesting << " levels)";
  return j.dump();
}

std::string record_key(const Record& r, std::string_view workload_hash) {
  Json times = r.times;  // shortest round-trip form of each double
  std::string text =
      fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{:a}\x1f{:a}\x1f{}\x1f{}\x1f{}\x1f{}",
                  workload_hash, r.target, r.trace_version, r.trace, status_name(r.status),
                  times.dump(), r.error, r.build_seconds, r.run_seconds, r.worker, r.tuner_version,
                  r.feature_version, r.created_ms);
  uint64_t a = fnv1a64(text);
  uint64_t b = fnv1a64(text, fnv1a64("tuner-record-key"));
  return fmt::format("{:016x}{:016x}", a, b);
}

}  // namespace tuner::db
