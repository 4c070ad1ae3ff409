#include "infra/telemetry/retention.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string_view>
#include <utility>

namespace tgw::infra::telemetry {

using ports::group_progress;
using ports::memory_use;
using ports::retention_view;

namespace {

std::pair<std::uint64_t, std::uint64_t> parse_id(const std::string& id) {
  std::uint64_t ms = 0;
  std::uint64_t seq = 0;
  const auto dash = id.find('-');
  std::from_chars(id.data(), id.data() + (dash == std::string::npos ? id.size() : dash), ms);
  if (dash != std::string::npos) std::from_chars(id.data() + dash + 1, id.data() + id.size(), seq);
  return {ms, seq};
}

// The id right after `id`: entries below it are the ones up to `id` itself.
std::string next_id(const std::string& id) {
  const auto [ms, seq] = parse_id(id);
  return std::to_string(ms) + "-" + std::to_string(seq + 1);
}

// The integer after "name:" in an INFO reply; nullopt if absent.
std::optional<std::int64_t> info_field(std::string_view info, std::string_view name) {
  const std::string key = "\n" + std::string(name) + ":";
  auto at = info.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  at += key.size();
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(info.data() + at, info.data() + info.size(), value);
  if (ec != std::errc()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<memory_use> read_memory(redis::connection& conn) {
  const auto info = conn.command({"INFO", "memory"});
  if (info.is_error()) return std::nullopt;
  const std::string text = "\n" + info.text;
  const auto used = info_field(text, "used_memory");
  const auto max = info_field(text, "maxmemory");
  if (!used || !max) return std::nullopt;
  return memory_use{*used, *max};
}

std::optional<std::int64_t> trim_to_length(redis::connection& conn, const std::string& stream,
                                           std::int64_t keep, std::string& error) {
  const auto removed = conn.command({"XTRIM", stream, "MAXLEN", std::to_string(keep)});
  if (removed.is_error()) {
    error = removed.text;
    return std::nullopt;
  }
  return removed.integer;
}

bool stream_id_less(const std::string& a, const std::string& b) {
  return parse_id(a) < parse_id(b);
}

std::optional<retention_view> read_retention(redis::connection& conn, const std::string& stream,
                                             std::string& error) {
  retention_view view;
  const auto length = conn.command({"XLEN", stream});
  if (length.is_error()) {
    error = length.text;
    return std::nullopt;
  }
  view.length = length.integer;
  if (view.length == 0) return view;
  // Sampled (Redis' default of 5 listpack nodes): exact would walk the whole stream.
  if (const auto usage = conn.command({"MEMORY", "USAGE", stream}); usage.is_integer())
    view.bytes = usage.integer;
  const auto groups = conn.command({"XINFO", "GROUPS", stream});
  if (groups.is_error()) {
    error = groups.text;
    return std::nullopt;
  }
  for (const auto& g : groups.elements) {
    group_progress p;
    if (const auto* v = redis::map_field(g, "name")) p.name = v->text;
    if (const auto* v = redis::map_field(g, "pending")) p.pending = v->integer;
    const auto* lag = redis::map_field(g, "lag");
    p.lag_entries = lag != nullptr && lag->is_integer() ? lag->integer : -1;
    const auto* delivered = redis::map_field(g, "last-delivered-id");
    const std::string last = delivered != nullptr ? delivered->text : "0-0";
    p.oldest_needed = next_id(last);
    if (p.pending > 0) {
      const auto summary = conn.command({"XPENDING", stream, p.name});
      if (summary.is_error() || summary.elements.size() < 2) {
        error = summary.is_error() ? summary.text : "unexpected XPENDING reply";
        return std::nullopt;
      }
      // Acknowledged between XINFO and XPENDING: nothing pending any more.
      if (summary.elements[1].is_nil()) {
        p.pending = 0;
      } else {
        p.oldest_needed = summary.elements[1].text;
        p.oldest_needed_stored_ms = static_cast<std::int64_t>(parse_id(p.oldest_needed).first);
      }
    }
    if (!p.oldest_needed_stored_ms && p.lag_entries != 0) {
      // The first entry not yet delivered, if there is one: its id says when it was
      // stored, which the bound (last delivered + 1) does not.
      const auto first = conn.command({"XRANGE", stream, "(" + last, "+", "COUNT", "1"});
      if (first.is_error()) {
        error = first.text;
        return std::nullopt;
      }
      if (!first.elements.empty() && !first.elements[0].elements.empty())
        p.oldest_needed_stored_ms =
            static_cast<std::int64_t>(parse_id(first.elements[0].elements[0].text).first);
    }
    view.groups.push_back(std::move(p));
  }
  for (const auto& g : view.groups)
    if (!view.trim_below || stream_id_less(g.oldest_needed, *view.trim_below))
      view.trim_below = g.oldest_needed;
  return view;
}

std::optional<std::int64_t> trim_acknowledged(redis::connection& conn, const std::string& stream,
                                              const retention_view& view, std::string& error) {
  if (!view.trim_below) return 0;
  // Exact, not `~`: the bound is a promise that nothing at or above it goes.
  const auto removed = conn.command({"XTRIM", stream, "MINID", *view.trim_below});
  if (removed.is_error()) {
    error = removed.text;
    return std::nullopt;
  }
  return removed.integer;
}

}  // namespace tgw::infra::telemetry
