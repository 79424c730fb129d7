#include "db/timestamp.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>

namespace tuner::db {

namespace chr = std::chrono;

int64_t now_ms() {
  return chr::duration_cast<chr::milliseconds>(chr::system_clock::now().time_since_epoch()).count();
}

std::string format_time(int64_t ms) {
  chr::sys_time<chr::milliseconds> tp{chr::milliseconds(ms)};
  auto day = chr::floor<chr::days>(tp);
  chr::year_month_day ymd{day};
  chr::hh_mm_ss hms{tp - day};
  return fmt::format("{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}.{:03d}Z", int(ymd.year()),
                     unsigned(ymd.month()), unsigned(ymd.day()), hms.hours().count(),
                     hms.minutes().count(), hms.seconds().count(), hms.subseconds().count());
}

std::optional<int64_t> parse_time(std::string_view s) {
  if (s.size() != 24) return std::nullopt;
  int y, mo, d, h, mi, sec, ms, n = 0;
  std::string buf(s);
  if (std::sscanf(buf.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ%n", &y, &mo, &d, &h, &mi, &sec, &ms,
                  &n) != 7 ||
      n != 24)
    return std::nullopt;
  chr::year_month_day ymd{chr::year(y), chr::month(unsigned(mo)), chr::day(unsigned(d))};
  if (!ymd.ok() || h > 23 || mi > 59 || sec > 59 || h < 0 || mi < 0 || sec < 0 || ms < 0)
    return std::nullopt;
  auto tp = chr::sys_days(ymd) + chr::hours(h) + chr::minutes(mi) + chr::seconds(sec) +
            chr::milliseconds(ms);
  int64_t out = tp.time_since_epoch().count();
  if (format_time(out) != s) return std::nullopt;  // e.g. "+1" digits sscanf accepted
  return out;
}

}  // namespace tuner::db
