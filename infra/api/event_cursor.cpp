#include "infra/api/event_cursor.hpp"

#include <algorithm>
#include <charconv>
#include <utility>

namespace tgw::infra::api {
namespace {

std::pair<std::uint64_t, std::uint64_t> id_parts(std::string_view id) {
  std::uint64_t ms = 0, seq = 0;
  const auto dash = id.find('-');
  std::from_chars(id.data(), id.data() + std::min(dash, id.size()), ms);
  if (dash != std::string_view::npos)
    std::from_chars(id.data() + dash + 1, id.data() + id.size(), seq);
  return {ms, seq};
}

}  // namespace

bool stream_id_before(std::string_view a, std::string_view b) {
  return id_parts(a) < id_parts(b);
}

bool is_stream_id(std::string_view text) {
  const auto dash = text.find('-');
  if (dash == 0 || dash == std::string_view::npos || dash + 1 == text.size()) return false;
  return text.find_first_not_of("0123456789-") == std::string_view::npos &&
         text.find('-', dash + 1) == std::string_view::npos && dash <= 20 &&
         text.size() - dash - 1 <= 20;
}

std::string cursor_text(const event_cursor& c) {
  std::string out;
  for (const std::string& id : c) out.append(out.empty() ? "" : "_").append(id);
  return out;
}

std::optional<std::uint8_t> parse_event_kinds(std::string_view text, api_error& error) {
  std::uint8_t kinds = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    const std::string_view word = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (word == "record") {
      kinds |= static_cast<std::uint8_t>(event_kind::record);
    } else if (word == "session") {
      kinds |= static_cast<std::uint8_t>(event_kind::session);
    } else if (word == "command") {
      kinds |= static_cast<std::uint8_t>(event_kind::command);
    } else {
      error = {400, "bad_types",
               "types is a list of record, session and command: '" +
                   std::string(word.substr(0, 32)) + "'"};
      return std::nullopt;
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return kinds;
}

std::optional<event_cursor> parse_event_cursor(std::string_view text, std::size_t sources,
                                               api_error& error) {
  event_cursor c;
  std::size_t start = 0;
  while (start <= text.size() && c.size() <= sources) {
    const auto sep = text.find('_', start);
    const std::string_view id =
        text.substr(start, sep == std::string_view::npos ? std::string_view::npos : sep - start);
    if (!is_stream_id(id)) break;
    c.emplace_back(id);
    if (sep == std::string_view::npos) {
      if (c.size() == sources) return c;
      break;
    }
    start = sep + 1;
  }
  error = {400, "bad_last_event_id",
           "Last-Event-ID is the id of an event of this API (" + std::to_string(sources) +
               " stream ids joined by '_'), as the last event received carried it"};
  return std::nullopt;
}

}  // namespace tgw::infra::api
