#include "support/escape.h"

#include <fmt/format.h>

namespace tuner {

std::string escape_controls(std::string_view s, bool keep_layout) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    auto c = (unsigned char)s[i];
    if ((c < 0x20 && !(keep_layout && (c == '\n' || c == '\t'))) || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else if (c == 0xc2 && i + 1 < s.size() && (unsigned char)s[i + 1] >= 0x80 &&
               (unsigned char)s[i + 1] <= 0x9f) {
      // A C1 control in UTF-8 (U+0080..U+009F): U+009B starts an escape sequence too.
      out += fmt::format("\\u{:04x}", (unsigned char)s[++i]);
    } else {
      out += (char)c;
    }
  }
  return out;
}

std::string_view first_chars(std::string_view s, size_t n) {
  size_t chars = 0;
  for (size_t i = 0; i < s.size(); ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && chars++ == n) return s.substr(0, i);
  return s;
}

}  // namespace tuner
