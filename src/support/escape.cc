#include "support/escape.h"

#include <fmt/format.h>

namespace tuner {

std::string escape_controls(std::string_view s, bool keep_layout) {
  std::string out;
  for (char c : s)
    if (((unsigned char)c < 0x20 && !(keep_layout && (c == '\n' || c == '\t'))) || c == 0x7f) out += fmt::format("\\x{:02x}", (unsigned char)c);
    else out += c;
  return out;
}

}  // namespace tuner
