#include "support/json.h"

#include <algorithm>

#include "support/error.h"

namespace tuner {

int json_nesting(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

Json parse_json(std::string_view text, bool allow_exceptions) {
  if (json_nesting(text) > kMaxJsonNesting) {
    if (!allow_exceptions) return Json(Json::value_t::discarded);
    USER_ERROR() << "JSON nested deeper than " << kMaxJsonNesting << " levels";
  }
  return Json::parse(text, nullptr, allow_exceptions);
}

}  // namespace tuner
