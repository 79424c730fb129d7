#include "support/log.h"

namespace tuner {

LogLevel& log_level() {
  static LogLevel level = LogLevel::Info;
  return level;
}

}  // namespace tuner
