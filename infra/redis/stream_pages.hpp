#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "infra/redis/connection.hpp"

namespace tgw::infra::redis {

/// One stream entry: its id and its field/value pairs, in order.
struct stream_entry {
  std::string id;
  std::vector<std::pair<std::string, std::string>> fields;

  /// The value of `name`, or nullptr.
  [[nodiscard]] const std::string* find(std::string_view name) const noexcept {
    for (const auto& [k, v] : fields)
      if (k == name) return &v;
    return nullptr;
  }
  /// The value of `name`, or empty.
  [[nodiscard]] std::string get(std::string_view name) const {
    const std::string* v = find(name);
    return v == nullptr ? std::string() : *v;
  }
};

/// The entries of one XRANGE/XREVRANGE reply.
[[nodiscard]] std::vector<stream_entry> stream_entries(const value& reply);

/// Reads `key` oldest first from the entries at or after `from_ms` (0: from the start)
/// in pages of `page`, calling `visit` for each; false with `error` on a Redis failure.
/// A missing key is an empty stream.
bool for_each_entry(connection& conn, const std::string& key, std::int64_t from_ms,
                    const std::function<void(stream_entry&&)>& visit, std::string& error,
                    std::size_t page = 1000);

/// The newest `count` entries of `key`, oldest first; nullopt with `error`.
[[nodiscard]] std::optional<std::vector<stream_entry>> newest_entries(connection& conn,
                                                                      const std::string& key,
                                                                      std::size_t count,
                                                                      std::string& error);

/// The ms part of a stream id ("1700000000000-3" is 1700000000000); 0 if none.
[[nodiscard]] std::int64_t stream_id_ms(const std::string& id) noexcept;

}  // namespace tgw::infra::redis
