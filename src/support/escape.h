// A user's or a client's string inside a message: control characters escaped, so a NUL
// cannot cut the message short (what() is a C string) and escape sequences never reach a
// terminal as such. UserError applies it to every message; the server to its status texts.
#pragma once

#include <string>
#include <string_view>

namespace tuner {

/// `s` with control characters (below 0x20, and 0x7f) written as \xNN, newlines and tabs too
/// unless `keep_layout`, and UTF-8 C1 controls (U+0080..U+009F) as \uNNNN; the rest
/// unchanged. Idempotent.
std::string escape_controls(std::string_view s, bool keep_layout = false);

/// The first `n` characters (UTF-8 code points) of `s`: a column of a listing cut before
/// escaping, so the cut never splits a character or an escape.
std::string_view first_chars(std::string_view s, size_t n);

}  // namespace tuner
