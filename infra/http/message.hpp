#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tgw::infra::http {

using fields = std::vector<std::pair<std::string, std::string>>;

/// One request as a handler sees it: owned strings, copied out of the parser, so that
/// a handler may keep it while it awaits other work.
struct request {
  std::string method;  ///< As sent: "GET", "POST".
  std::string target;  ///< As sent: "/v1/devices?limit=10".
  std::string path;    ///< The target before '?', not decoded: "/v1/devices".
  std::string query;   ///< After '?', not decoded: "limit=10"; empty without one.
  fields headers;      ///< Names in lower case, values as sent, in order.
  std::string body;
  /// The pattern's {name} segments, percent-decoded: {"imei", "356307042441013"}.
  fields params;
  std::string peer;  ///< The client's address, "198.51.100.7" or "2001:db8::1".

  /// The first header of that name (any case), if any.
  [[nodiscard]] std::optional<std::string_view> header(std::string_view name) const;
  /// The path segment the pattern names {name}, if any.
  [[nodiscard]] std::optional<std::string_view> param(std::string_view name) const;
};

/// One response. Content-Length is set from the body; the connection decides about
/// keep-alive.
struct response {
  unsigned status = 200;
  std::string content_type = "text/plain";
  std::string body;
  fields headers;  ///< Extra fields: Location, Allow, Retry-After, ...

  /// A plain-text response.
  static response text(unsigned status, std::string body);
};

}  // namespace tgw::infra::http
