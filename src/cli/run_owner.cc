#include "cli/run_owner.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "db/timestamp.h"

namespace tuner::cli {

namespace {

std::string host_name() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

// Field 22 of /proc/PID/stat, the process's start time in clock ticks since boot; -1 when
// there is no such process, or only its zombie (killed, not yet reaped by its parent: it
// tunes nothing any more).
long long start_time(long long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t paren = stat.rfind(')');  // the command name may hold spaces and parentheses
  if (paren == std::string::npos) return -1;
  std::istringstream fields(stat.substr(paren + 1));
  std::string f;
  for (int i = 3; i <= 22 && fields >> f; ++i) {
    if (i == 3 && (f == "Z" || f == "X")) return -1;
    if (i == 22) return std::stoll(f);
  }
  return -1;
}

}  // namespace

Json this_process() {
  long long pid = getpid();
  return Json{{"host", host_name()}, {"pid", pid}, {"start", start_time(pid)}};
}

bool process_alive(const Json& owner) {
  if (!owner.is_object()) return false;
  auto host = owner.find("host"), pid = owner.find("pid"), start = owner.find("start");
  if (host == owner.end() || pid == owner.end() || start == owner.end() || !host->is_string() ||
      !pid->is_number_integer() || !start->is_number_integer())
    return false;
  long long p = pid->get<long long>();
  if (*host != host_name() || p <= 0) return false;
  long long s = start_time(p);
  return s >= 0 && s == start->get<long long>();
}

Json run_sessions(const Json& stored_progress, int64_t started_ms) {
  Json s = stored_progress.is_object() && stored_progress.contains("sessions") &&
                   stored_progress["sessions"].is_array()
               ? stored_progress["sessions"]
               : Json::array();
  s.push_back({started_ms, db::now_ms()});
  return s;
}

}  // namespace tuner::cli
