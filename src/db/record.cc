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

static bool finite_non_negative(double v) { return std::isfinite(v) && v >= 0; }

void check_record(const Record& r) {
  USER_CHECK(r.workload_id > 0) << "record has no workload";
  USER_CHECK(!r.target.empty()) << "record has no target";
  USER_CHECK(r.trace_version > 0) << "record has no trace version";
  USER_CHECK(Json::accept(r.trace)) << "record trace is not valid JSON";
  if (r.status == MeasureStatus::Ok) {
    USER_CHECK(!r.times.empty()) << "an ok record needs at least one time";
    for (double t : r.times)
      USER_CHECK(std::isfinite(t) && t > 0) << "an ok record's times must be positive, got " << t;
  } else {
    for (double t : r.times)
      USER_CHECK(finite_non_negative(t)) << "record time " << t << " is not a finite duration";
  }
  USER_CHECK(finite_non_negative(r.build_seconds)) << "record build seconds is not a duration";
  USER_CHECK(finite_non_negative(r.run_seconds)) << "record run seconds is not a duration";
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
