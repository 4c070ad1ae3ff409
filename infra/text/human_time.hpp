#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tgw::infra {

/// A time for people: "2026-11-26T15:02:03Z" (UTC, to the second) from ms since the
/// epoch.
[[nodiscard]] std::string utc_time(std::int64_t ms);

/// How long before `now_ms` `then_ms` was, rounded down to at most two units:
/// "just now" (under a second), "12 s ago", "4 min 10 s ago", "3 h 12 min ago",
/// "2 d 5 h ago"; a time ahead of `now_ms` (clocks apart) reads "in 3 s".
[[nodiscard]] std::string time_ago(std::int64_t then_ms, std::int64_t now_ms);

/// Both: "2026-11-26T15:02:03Z (12 s ago)".
[[nodiscard]] std::string time_and_age(std::int64_t then_ms, std::int64_t now_ms);

/// The time an operator writes: "2026-11-26T15:02:03Z" or "2026-11-26" (midnight),
/// UTC; ms since the epoch, or nullopt for anything else.
[[nodiscard]] std::optional<std::int64_t> parse_utc_time(std::string_view text);

/// Milliseconds since the epoch by this host's clock.
[[nodiscard]] std::int64_t now_ms();

}  // namespace tgw::infra
