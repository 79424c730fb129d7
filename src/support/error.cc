#include "support/error.h"

#include "support/escape.h"

namespace tuner {

UserError::UserError(const std::string& message)
    : std::runtime_error(escape_controls(message, /*keep_layout=*/true)) {}

InternalError::InternalError(const std::string& message)
    : std::logic_error(escape_controls(message, /*keep_layout=*/true)) {}

}  // namespace tuner

namespace tuner::detail {

std::string internal_prefix(const char* file, int line, const char* cond) {
  return std::string("internal error (a bug in Tuner) at ") + file + ":" + std::to_string(line) +
         ": check `" + cond + "` failed: ";
}

}  // namespace tuner::detail
