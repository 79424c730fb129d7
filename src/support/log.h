// Minimal leveled logging to stderr. The CLI sets the level from --verbose/--quiet.
#pragma once

#include <fmt/core.h>

#include "support/escape.h"

namespace tuner {

enum class LogLevel { Quiet = 0, Info = 1, Debug = 2 };

/// The process-wide log level (default Info).
LogLevel& log_level();

/// Prints a formatted line to stderr when `level` is enabled. Control characters are escaped:
/// a client's or worker's string (a device key, a model name) can neither forge a log line
/// with a newline nor send escape sequences to an operator's terminal.
template <class... Args>
void log(LogLevel level, fmt::format_string<Args...> f, Args&&... args) {
  if (int(level) <= int(log_level()))
    fmt::print(stderr, "{}\n", escape_controls(fmt::format(f, std::forward<Args>(args)...)));
}

}  // namespace tuner
