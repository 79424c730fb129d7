// A user's or a client's string inside an error message: control characters escaped, so a
// NUL cannot cut the message short (UserError::what() is a C string) and escape sequences
// never reach a terminal as such.
#pragma once

#include <string>
#include <string_view>

namespace tuner {

/// `s` with control characters (below 0x20, and 0x7f) written as \xNN; the rest unchanged.
std::string escape_controls(std::string_view s);

}  // namespace tuner
