#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tgw::infra::redis {

/// One TCP address.
struct host_port {
  std::string host;
  std::uint16_t port = 0;

  friend bool operator==(const host_port&, const host_port&) = default;
};

/// How to speak TLS to Redis (rediss://, rediss+sentinel://, rediss+cluster://). The
/// server's certificate and name are verified unless `insecure`; OpenSSL does the
/// records, see tls_stream.
struct tls_options {
  bool enabled = false;
  std::string ca_file;      ///< PEM CA bundle; empty: the system's trust store.
  std::string cert_file;    ///< Client certificate (PEM) for `tls-auth-clients yes`.
  std::string key_file;     ///< Its private key (PEM).
  std::string server_name;  ///< SNI and the name checked; empty: the host connected to.
  bool insecure = false;    ///< No certificate or name check (tests only).

  friend bool operator==(const tls_options&, const tls_options&) = default;
};

/// Where a Redis server is and how to log in to it.
struct endpoint {
  std::string host = "127.0.0.1";
  std::uint16_t port = 6379;
  std::string unix_socket;  ///< Used instead of host and port when set.
  std::string user;         ///< ACL user; empty for the default user.
  std::string password;
  int db = 0;
  /// Sentinel mode: the master is asked of these sentinels by `master_name` at every
  /// connect, and host and port above are only where it was last found. The user and
  /// password are the master's; the sentinels are asked without a login.
  std::vector<host_port> sentinels;
  std::string master_name;

  /// Cluster mode: the nodes the slot map is first asked of. host and port above are
  /// the first of them.
  std::vector<host_port> cluster_nodes;

  /// TLS to every server of the endpoint: the one named, the sentinels and the master
  /// they name, every cluster node.
  tls_options tls;

  [[nodiscard]] bool via_sentinel() const noexcept { return !sentinels.empty(); }
  [[nodiscard]] bool via_cluster() const noexcept { return !cluster_nodes.empty(); }
  /// The URL without the password: redis://host:port/db, unix:///path?db=N,
  /// redis+sentinel://host:port,.../MASTER?db=N or redis+cluster://host:port,...
  /// (rediss... with TLS).
  [[nodiscard]] std::string describe() const;
};

/// Parses redis://[user:password@]host[:port][/db], unix://[user:password@]path[?db=N]
/// (a relative path is taken from the working directory and made absolute) and
/// redis+sentinel://[user:password@]host[:port][,host[:port]...]/MASTER[?db=N]
/// (sentinel port 26379 by default) and redis+cluster://[user:password@]host[:port]
/// [,host[:port]...] (port 6379 by default; a cluster has database 0 only). The TLS
/// forms rediss://, rediss+sentinel:// and rediss+cluster:// set `tls.enabled`; TLS has
/// no unix:// form.
/// nullopt with `error` set on anything else.
[[nodiscard]] std::optional<endpoint> parse_redis_url(std::string_view url, std::string& error);

}  // namespace tgw::infra::redis
