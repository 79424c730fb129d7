// Wall-clock timestamps of the database: integer milliseconds since the Unix epoch (UTC),
// printed as ISO-8601 "2026-11-22T03:34:51.123Z" in exports and tables.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tuner::db {

/// Now, in milliseconds since the epoch.
int64_t now_ms();
/// "2026-11-22T03:34:51.123Z" (always millisecond precision, UTC).
std::string format_time(int64_t ms);
/// The inverse of format_time (exactly that form); nullopt when malformed.
std::optional<int64_t> parse_time(std::string_view s);

}  // namespace tuner::db
