#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tgw::infra::redis {

/// Where a Redis server is and how to log in to it.
struct endpoint {
  std::string host = "127.0.0.1";
  std::uint16_t port = 6379;
  std::string unix_socket;  ///< Used instead of host and port when set.
  std::string user;         ///< ACL user; empty for the default user.
  std::string password;
  int db = 0;

  /// redis://host:port/db or unix:///path?db=N, without the password.
  [[nodiscard]] std::string describe() const;
};

/// Parses redis://[user:password@]host[:port][/db] and unix://[user:password@]path[?db=N]
/// (a relative path is taken from the working directory and made absolute).
/// nullopt with `error` set on anything else.
[[nodiscard]] std::optional<endpoint> parse_redis_url(std::string_view url, std::string& error);

}  // namespace tgw::infra::redis
