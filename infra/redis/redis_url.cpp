#include "infra/redis/redis_url.hpp"

#include <charconv>
#include <filesystem>

namespace tgw::infra::redis {
namespace {

template <class Int>
bool parse_int(std::string_view text, Int& out) {
  const auto* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc{} && ptr == end && !text.empty();
}

// "user:password@" or "password@" (redis-cli's form ":password@" too).
void take_credentials(std::string_view& rest, endpoint& e) {
  const auto at = rest.rfind('@');
  if (at == std::string_view::npos) return;
  const std::string_view credentials = rest.substr(0, at);
  rest.remove_prefix(at + 1);
  const auto colon = credentials.find(':');
  if (colon == std::string_view::npos) {
    e.password = credentials;
  } else {
    e.user = credentials.substr(0, colon);
    e.password = credentials.substr(colon + 1);
  }
}

}  // namespace

std::string endpoint::describe() const {
  if (!unix_socket.empty()) return "unix://" + unix_socket + "?db=" + std::to_string(db);
  return "redis://" + host + ":" + std::to_string(port) + "/" + std::to_string(db);
}

std::optional<endpoint> parse_redis_url(std::string_view url, std::string& error) {
  endpoint e;
  if (url.starts_with("unix://")) {
    std::string_view rest = url.substr(7);
    take_credentials(rest, e);
    const auto query = rest.find('?');
    e.unix_socket = rest.substr(0, query);
    if (e.unix_socket.empty()) {
      error = "missing unix socket path in '" + std::string(url) + "'";
      return std::nullopt;
    }
    // unix://tgw-data/redis.sock: relative to the working directory, as a shell user
    // means it; made absolute so that logs and error messages show the real place.
    if (e.unix_socket.front() != '/') {
      std::error_code ec;
      e.unix_socket = std::filesystem::absolute(e.unix_socket, ec).lexically_normal().string();
    }
    if (query != std::string_view::npos) {
      const std::string_view q = rest.substr(query + 1);
      if (!q.starts_with("db=") || !parse_int(q.substr(3), e.db) || e.db < 0) {
        error = "bad query in '" + std::string(url) + "': expected ?db=N";
        return std::nullopt;
      }
    }
    return e;
  }
  if (!url.starts_with("redis://")) {
    error = "Redis URL must start with redis:// or unix://: '" + std::string(url) + "'";
    return std::nullopt;
  }
  std::string_view rest = url.substr(8);
  take_credentials(rest, e);
  const auto slash = rest.find('/');
  std::string_view hostport = rest.substr(0, slash);
  if (slash != std::string_view::npos) {
    const std::string_view db = rest.substr(slash + 1);
    if (!db.empty() && (!parse_int(db, e.db) || e.db < 0)) {
      error = "bad database number '" + std::string(db) + "'";
      return std::nullopt;
    }
  }
  if (hostport.starts_with('[')) {  // [::1]:6379
    const auto close = hostport.find(']');
    if (close == std::string_view::npos) {
      error = "unclosed '[' in '" + std::string(url) + "'";
      return std::nullopt;
    }
    e.host = hostport.substr(1, close - 1);
    hostport.remove_prefix(close + 1);
    if (!hostport.empty() && hostport.front() != ':') {
      error = "expected ':' after ']' in '" + std::string(url) + "'";
      return std::nullopt;
    }
    if (!hostport.empty()) hostport.remove_prefix(1);
    if (!hostport.empty() && !parse_int(hostport, e.port)) {
      error = "bad port '" + std::string(hostport) + "'";
      return std::nullopt;
    }
    return e;
  }
  const auto colon = hostport.rfind(':');
  if (colon != std::string_view::npos) {
    if (!parse_int(hostport.substr(colon + 1), e.port) || e.port == 0) {
      error = "bad port '" + std::string(hostport.substr(colon + 1)) + "'";
      return std::nullopt;
    }
    hostport = hostport.substr(0, colon);
  }
  if (!hostport.empty()) e.host = hostport;
  return e;
}

}  // namespace tgw::infra::redis
