#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "infra/redis/failure_kind.hpp"

namespace tgw::infra::redis {

/// A Redis reply copied out of hiredis, so it can outlive the connection's buffers
/// and travel in actor messages.
struct value {
  enum class kind : std::uint8_t { nil, integer, string, status, error, array };

  kind type = kind::nil;
  std::int64_t integer = 0;
  std::string text;  ///< For string, status and error.
  std::vector<value> elements;
  /// For an error: why, classified once where it was made. Callers branch on this; the
  /// text is for logs.
  failure_kind failure = failure_kind::none;

  [[nodiscard]] bool is_nil() const noexcept { return type == kind::nil; }
  [[nodiscard]] bool is_error() const noexcept { return type == kind::error; }
  [[nodiscard]] bool is_integer() const noexcept { return type == kind::integer; }
  [[nodiscard]] bool is_string() const noexcept { return type == kind::string; }
  [[nodiscard]] bool is_array() const noexcept { return type == kind::array; }

  /// The integer, or a bulk string that holds one; nullopt otherwise.
  [[nodiscard]] std::optional<std::int64_t> as_int() const;

  /// An error reply in Redis' words ("OOM command not allowed ..."), classified by its
  /// code word.
  static value make_error(std::string message) {
    value v;
    v.type = kind::error;
    v.failure = classify_error_reply(message);
    v.text = std::move(message);
    return v;
  }
  /// The client's own failure (unreachable, timeout): `why` in its words, written as
  /// "IO why" for logs.
  static value make_transport_error(failure_kind failure, std::string_view why) {
    value v;
    v.type = kind::error;
    v.failure = failure;
    v.text.reserve(transport_text_prefix.size() + why.size());
    v.text.append(transport_text_prefix).append(why);
    return v;
  }
  /// The client could not reach or keep its server: make_transport_error(unreachable).
  static value make_unreachable(std::string_view why) {
    return make_transport_error(failure_kind::unreachable, why);
  }

  friend bool operator==(const value&, const value&) = default;
};

/// The value after `name` in a reply that is a flat array of name, value pairs (an
/// XINFO reply, one group of XINFO GROUPS); nullptr when the name is not there.
[[nodiscard]] inline const value* map_field(const value& map, std::string_view name) {
  for (std::size_t i = 0; i + 1 < map.elements.size(); i += 2)
    if (map.elements[i].text == name) return &map.elements[i + 1];
  return nullptr;
}

/// Redis error replies start with a code word: "BUSYGROUP ...", "NOGROUP ...".
[[nodiscard]] inline bool error_is(const value& v, std::string_view code) {
  return v.is_error() && v.text.starts_with(code);
}

}  // namespace tgw::infra::redis
