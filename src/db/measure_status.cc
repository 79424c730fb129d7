#include "db/measure_status.h"

namespace tuner::db {

const char* status_name(MeasureStatus s) {
  switch (s) {
    case MeasureStatus::Ok: return "ok";
    case MeasureStatus::Instantiation: return "INSTANTIATION";
    case MeasureStatus::CompileHost: return "COMPILE_HOST";
    case MeasureStatus::CompileDevice: return "COMPILE_DEVICE";
    case MeasureStatus::RuntimeDevice: return "RUNTIME_DEVICE";
    case MeasureStatus::WrongAnswer: return "WRONG_ANSWER";
    case MeasureStatus::BuildTimeout: return "BUILD_TIMEOUT";
    case MeasureStatus::RunTimeout: return "RUN_TIMEOUT";
    case MeasureStatus::Unknown: return "UNKNOWN";
  }
  return "UNKNOWN";
}

std::optional<MeasureStatus> parse_status(std::string_view s) {
  for (MeasureStatus st : kAllStatuses)
    if (s == status_name(st)) return st;
  return std::nullopt;
}

}  // namespace tuner::db
