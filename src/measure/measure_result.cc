#include "measure/measure_result.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace tuner::measure {

double MeasureResult::median() const {
  if (times.empty()) return std::numeric_limits<double>::infinity();
  std::vector<double> t = times;
  std::sort(t.begin(), t.end());
  size_t n = t.size();
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

std::string MeasureResult::str() const {
  if (ok()) return fmt::format("ok {:.4f} ms", median() * 1e3);
  return fmt::format("{}: {}", db::status_name(status), error);
}

MeasureResult make_error(db::MeasureStatus status, std::string error) {
  MeasureResult r;
  r.status = status;
  r.error = std::move(error);
  return r;
}

}  // namespace tuner::measure
