// JSON is nlohmann::json (Debian nlohmann-json3-dev); ordered so printed keys keep their order.
#pragma once

#include <nlohmann/json.hpp>

namespace tuner {
using Json = nlohmann::ordered_json;
}
