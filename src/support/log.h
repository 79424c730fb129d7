// Minimal leveled logging to stderr. The CLI sets the level from --verbose/--quiet.
#pragma once

#include <fmt/core.h>

namespace tuner {

enum class LogLevel { Quiet = 0, Info = 1, Debug = 2 };

/// The process-wide log level (default Info).
LogLevel& log_level();

/// Prints a formatted line to stderr when `level` is enabled.
template <class... Args>
void log(LogLevel level, fmt::format_string<Args...> f, Args&&... args) {
  if (int(level) <= int(log_level())) {
    fmt::print(stderr, f, std::forward<Args>(args)...);
    fmt::print(stderr, "\n");
  }
}

}  // namespace tuner
