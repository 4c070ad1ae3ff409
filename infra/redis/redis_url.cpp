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

// "host", "host:port", "[v6]" or "[v6]:port"; an empty port keeps `out.port`.
bool parse_host_port(std::string_view text, host_port& out, std::string& error) {
  std::string_view port_text;
  if (text.starts_with('[')) {
    const auto close = text.find(']');
    if (close == std::string_view::npos) {
      error = "unclosed '[' in '" + std::string(text) + "'";
      return false;
    }
    out.host = text.substr(1, close - 1);
    const std::string_view after = text.substr(close + 1);
    if (!after.empty() && after.front() != ':') {
      error = "expected ':' after ']' in '" + std::string(text) + "'";
      return false;
    }
    if (!after.empty()) port_text = after.substr(1);
  } else {
    const auto colon = text.rfind(':');
    out.host = text.substr(0, colon);
    if (colon != std::string_view::npos) port_text = text.substr(colon + 1);
  }
  if (out.host.empty()) {
    error = "missing host in '" + std::string(text) + "'";
    return false;
  }
  if (!port_text.empty() && (!parse_int(port_text, out.port) || out.port == 0)) {
    error = "bad port '" + std::string(port_text) + "'";
    return false;
  }
  return true;
}

bool parse_db_query(std::string_view query, std::string_view url, int& db, std::string& error) {
  if (!query.starts_with("db=") || !parse_int(query.substr(3), db) || db < 0) {
    error = "bad query in '" + std::string(url) + "': expected ?db=N";
    return false;
  }
  return true;
}

// "host:port,host,[v6]:port": each without a port gets `default_port`.
bool parse_host_list(std::string_view list, std::uint16_t default_port, std::string_view what,
                     std::vector<host_port>& out, std::string& error) {
  while (true) {
    const auto comma = list.find(',');
    host_port address{"", default_port};
    if (!parse_host_port(list.substr(0, comma), address, error)) {
      error.insert(0, std::string(what) + ": ");
      return false;
    }
    out.push_back(std::move(address));
    if (comma == std::string_view::npos) return true;
    list.remove_prefix(comma + 1);
  }
}

// rest: what follows "redis+sentinel://" or "rediss+sentinel://".
std::optional<endpoint> parse_sentinel_url(std::string_view url, std::string_view rest,
                                           std::string& error) {
  endpoint e;
  const auto query = rest.find('?');
  if (query != std::string_view::npos) {
    if (!parse_db_query(rest.substr(query + 1), url, e.db, error)) return std::nullopt;
    rest = rest.substr(0, query);
  }
  take_credentials(rest, e);
  const auto slash = rest.find('/');
  if (slash == std::string_view::npos || slash + 1 == rest.size()) {
    error = "missing master name in '" + std::string(url) +
            "': expected redis+sentinel://host:port[,host:port...]/MASTER";
    return std::nullopt;
  }
  e.master_name = rest.substr(slash + 1);
  if (e.master_name.find('/') != std::string::npos) {
    error = "bad master name '" + e.master_name + "' in '" + std::string(url) + "'";
    return std::nullopt;
  }
  if (!parse_host_list(rest.substr(0, slash), 26379, "sentinel address", e.sentinels, error))
    return std::nullopt;
  e.host = e.sentinels.front().host;
  e.port = e.sentinels.front().port;
  return e;
}

// rest: what follows "redis+cluster://" or "rediss+cluster://".
std::optional<endpoint> parse_cluster_url(std::string_view url, std::string_view rest,
                                          std::string& error) {
  endpoint e;
  take_credentials(rest, e);
  // Database 0 may be named (/0, ?db=0): it is the only one a cluster has.
  for (const std::string_view zero : {"/0", "?db=0", "/0?db=0", "/"})
    if (rest.ends_with(zero)) {
      rest.remove_suffix(zero.size());
      break;
    }
  if (rest.find_first_of("/?") != std::string_view::npos) {
    error = "a cluster has database 0 only: '" + std::string(url) +
            "' names another (expected redis+cluster://host:port[,host:port...][/0])";
    return std::nullopt;
  }
  if (!parse_host_list(rest, 6379, "cluster node address", e.cluster_nodes, error))
    return std::nullopt;
  e.host = e.cluster_nodes.front().host;
  e.port = e.cluster_nodes.front().port;
  return e;
}

// A host as a URL writes it: an IPv6 address in brackets.
std::string url_host(const std::string& host) {
  return host.find(':') != std::string::npos ? "[" + host + "]" : host;
}

std::string address_list(const std::vector<host_port>& list) {
  std::string out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (i > 0) out += ',';
    out += url_host(list[i].host) + ":" + std::to_string(list[i].port);
  }
  return out;
}

std::optional<endpoint> parse_plain_url(std::string_view url, std::string& error) {
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
  if (!url.starts_with("redis://") && !url.starts_with("rediss://")) {
    error =
        "Redis URL must start with redis://, rediss://, unix://, redis+sentinel://, "
        "rediss+sentinel://, redis+cluster:// or rediss+cluster://: '" +
        std::string(url) + "'";
    return std::nullopt;
  }
  std::string_view rest = url.substr(url.find("://") + 3);
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

}  // namespace

std::string endpoint::describe() const {
  const std::string redis = tls.enabled ? "rediss" : "redis";
  if (via_cluster()) return redis + "+cluster://" + address_list(cluster_nodes);
  if (via_sentinel())
    return redis + "+sentinel://" + address_list(sentinels) + "/" + master_name +
           "?db=" + std::to_string(db);
  if (!unix_socket.empty()) return "unix://" + unix_socket + "?db=" + std::to_string(db);
  return redis + "://" + url_host(host) + ":" + std::to_string(port) + "/" + std::to_string(db);
}

std::optional<endpoint> parse_redis_url(std::string_view url, std::string& error) {
  // Each TLS scheme is its plain one with an "s": the same grammar after "://".
  const bool tls = url.starts_with("rediss");
  std::optional<endpoint> e;
  if (url.starts_with("redis+sentinel://") || url.starts_with("rediss+sentinel://"))
    e = parse_sentinel_url(url, url.substr(url.find("://") + 3), error);
  else if (url.starts_with("redis+cluster://") || url.starts_with("rediss+cluster://"))
    e = parse_cluster_url(url, url.substr(url.find("://") + 3), error);
  else
    e = parse_plain_url(url, error);
  if (e) e->tls.enabled = tls;
  return e;
}

}  // namespace tgw::infra::redis
