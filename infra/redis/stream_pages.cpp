#include "infra/redis/stream_pages.hpp"

#include <algorithm>
#include <charconv>

namespace tgw::infra::redis {

std::vector<stream_entry> stream_entries(const value& reply) {
  std::vector<stream_entry> out;
  out.reserve(reply.elements.size());
  for (const value& e : reply.elements) {
    if (e.elements.size() < 2) continue;
    stream_entry entry{e.elements[0].text, {}};
    const auto& kv = e.elements[1].elements;
    entry.fields.reserve(kv.size() / 2);
    for (std::size_t i = 0; i + 1 < kv.size(); i += 2)
      entry.fields.emplace_back(kv[i].text, kv[i + 1].text);
    out.push_back(std::move(entry));
  }
  return out;
}

bool for_each_entry(connection& conn, const std::string& key, std::int64_t from_ms,
                    const std::function<void(stream_entry&&)>& visit, std::string& error,
                    std::size_t page) {
  std::string start = from_ms > 0 ? std::to_string(from_ms) : "-";
  const std::string count = std::to_string(page);
  for (;;) {
    const value v = conn.command({"XRANGE", key, start, "+", "COUNT", count});
    if (v.is_error()) {
      error = key + ": " + v.text;
      return false;
    }
    std::vector<stream_entry> entries = stream_entries(v);
    const std::size_t got = entries.size();
    if (got > 0) start = "(" + entries.back().id;
    for (stream_entry& e : entries) visit(std::move(e));
    if (got < page) return true;
  }
}

std::optional<std::vector<stream_entry>> newest_entries(connection& conn, const std::string& key,
                                                        std::size_t count, std::string& error) {
  const value v = conn.command({"XREVRANGE", key, "+", "-", "COUNT", std::to_string(count)});
  if (v.is_error()) {
    error = key + ": " + v.text;
    return std::nullopt;
  }
  std::vector<stream_entry> out = stream_entries(v);
  std::reverse(out.begin(), out.end());
  return out;
}

std::int64_t stream_id_ms(const std::string& id) noexcept {
  std::int64_t ms = 0;
  std::from_chars(id.data(), id.data() + id.size(), ms);
  return ms;
}

}  // namespace tgw::infra::redis
