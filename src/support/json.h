// JSON is nlohmann::json (Debian nlohmann-json3-dev); ordered so printed keys keep their order.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

namespace tuner {
using Json = nlohmann::ordered_json;

/// Deeper JSON is refused on reading: printing a document recurses once per level, so a
/// crafted record (a trace of 100,000 nested brackets) would overflow the stack.
inline constexpr int kMaxJsonNesting = 256;

/// The deepest nesting of arrays and objects in JSON text (brackets outside strings).
int json_nesting(std::string_view text);

/// Json::parse for text read from files, databases and peers: nesting deeper than
/// kMaxJsonNesting is refused like invalid JSON (a discarded value without exceptions, else a
/// UserError naming the limit).
Json parse_json(std::string_view text, bool allow_exceptions = true);
}  // namespace tuner
