#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "infra/api/api_input.hpp"

namespace tgw::infra::api {

/// The kinds of event, a bit each: records stored, session changes (identified,
/// disconnected), command outcomes.
enum class event_kind : std::uint8_t { record = 1, session = 2, command = 4 };
inline constexpr std::uint8_t all_event_kinds = 7;

/// What one client follows.
struct event_filter {
  std::uint8_t kinds = all_event_kinds;
  std::set<std::string> imeis;  ///< Empty: every device.
  friend auto operator<=>(const event_filter&, const event_filter&) = default;
};

/// "record,session" as kinds; nullopt with a 400 in `error` for an unknown or empty list.
[[nodiscard]] std::optional<std::uint8_t> parse_event_kinds(std::string_view text,
                                                            api_error& error);

/// Where the events come from: per key shard, the telemetry stream, the sessions stream
/// and the responses stream, in that order. An event's SSE id is the position in every
/// one of them just after it ("<id>_<id>_..."), so that a client that reconnects with
/// Last-Event-ID is resumed in each at once: no single stream id could resume several
/// streams (or several masters' clocks) without a gap.
using event_cursor = std::vector<std::string>;

/// The cursor of a Last-Event-ID with `sources` positions; nullopt with a 400 for one
/// that is not one of ours (or of another key-shard count).
[[nodiscard]] std::optional<event_cursor> parse_event_cursor(std::string_view text,
                                                             std::size_t sources, api_error& error);
/// The cursor as an SSE id.
[[nodiscard]] std::string cursor_text(const event_cursor& c);
/// Whether `text` is a stream id: "<ms>-<seq>", both decimal.
[[nodiscard]] bool is_stream_id(std::string_view text);
/// Whether stream id `a` comes before `b`.
[[nodiscard]] bool stream_id_before(std::string_view a, std::string_view b);

}  // namespace tgw::infra::api
