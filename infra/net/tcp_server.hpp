#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "actors/ports/device_link.hpp"
#include "infra/net/address_limits.hpp"
#include "infra/net/asio.hpp"
#include "infra/net/connection_limits.hpp"
#include "infra/net/handshake_gate.hpp"
#include "infra/net/io_pool.hpp"
#include "infra/net/ip_prefix.hpp"
#include "infra/net/proxy_header.hpp"
#include "infra/net/tls_context.hpp"
#include "infra/net/traffic_recorder.hpp"

namespace tgw::infra::metrics {
class refusal_counters;
}

namespace tgw::infra::net {

/// What a listener requires before a connection's first frame: a PROXY protocol
/// header, a TLS handshake, and a place in its source address's limits. Each is
/// done on the connection's io thread, before a session actor exists.
struct listener_security {
  proxy_mode proxy = proxy_mode::off;
  /// The balancers: with `proxy` on, a connection from outside these blocks is closed
  /// before a byte of it is read, since its header would name any address it likes.
  std::vector<ip_prefix> proxy_from = loopback_prefixes();
  /// TLS on this listener; null: plain TCP.
  std::shared_ptr<tls_context_source> tls;
  /// Per source address limits, shared by every listener of the instance; null: none.
  /// They count the address a PROXY header names, whatever it is; a connection
  /// without one (or with a LOCAL or UNKNOWN one) counts under its peer's address.
  std::shared_ptr<address_limits> limits;
  /// Sources exempt from the per-address limits (--trusted-sources). None by default:
  /// loopback is not, since a local forwarder would make the whole internet exempt.
  std::vector<ip_prefix> trusted;
  /// Where refusals are counted (the instance's); null: not counted.
  std::shared_ptr<metrics::refusal_counters> refusals;
  /// TLS handshakes running at once, shared by every TLS listener; null: no bound.
  std::shared_ptr<handshake_gate> handshakes;
};

/// Counters the server keeps for metrics.
struct server_counters {
  std::atomic<std::uint64_t> accepted{0};
  std::atomic<std::uint64_t> refused_over_limit{0};
  /// Closed for a missing, malformed or oversized PROXY header.
  std::atomic<std::uint64_t> refused_proxy{0};
  /// Closed unread: PROXY protocol is on and the peer is not in `proxy_from`.
  std::atomic<std::uint64_t> refused_proxy_source{0};
  /// Refused by the per-address limits (rate or handshakes in progress).
  std::atomic<std::uint64_t> refused_address{0};
  std::atomic<std::uint64_t> tls_established{0};
  /// TLS handshakes that failed: plain bytes on the TLS port, a wrong certificate,
  /// no common version or cipher.
  std::atomic<std::uint64_t> tls_failed{0};
  std::atomic<std::int64_t> open{0};
  /// accept() calls that failed (descriptors or kernel memory exhausted).
  std::atomic<std::uint64_t> accept_failures{0};
  /// Keepalive bytes (0xFF) from identified devices, counted where they arrive.
  std::atomic<std::uint64_t> keepalives{0};
  /// Connections closed for a framing error, by codecs::errc value.
  std::array<std::atomic<std::uint64_t>, 32> framing_errors{};
};

/// Makes the listener for a new connection.
using listener_factory =
    std::function<std::unique_ptr<ports::connection_listener>(std::shared_ptr<ports::device_link>)>;

class tcp_connection;
struct connection_sweep;

/// Accepts device connections and spreads them over the io_pool's contexts: reads feed
/// the codec framer, complete frames go to the connection's listener, and writes come
/// back through device_link. A socket is only ever touched by its context's thread.
/// The listener is made once the connection passed `security`, so a session sees
/// the device's real address and only decrypted bytes.
class tcp_server {
 public:
  /// With `capture`, every connection's bytes in both directions are also handed to
  /// it (after TLS: the application bytes); without, the data path pays one
  /// null-pointer check.
  tcp_server(io_pool& pool, const tcp::endpoint& where, connection_limits limits,
             listener_factory make_listener, std::shared_ptr<traffic_recorder> capture = nullptr,
             listener_security security = {});
  ~tcp_server();

  /// The bound port (useful with port 0).
  [[nodiscard]] std::uint16_t port() const { return port_; }
  void start();
  /// Stops accepting; open connections stay.
  void stop_accepting();
  /// Closes every open connection with `reason`.
  void close_all(const std::string& reason);
  [[nodiscard]] const server_counters& counters() const { return counters_; }

 private:
  friend class tcp_connection;
  friend struct connection_sweep;
  void accept_next();
  void forget(tcp_connection* c);

  /// What every connection of the server reads. A connection holds it, not copies:
  /// one pointer keeps an idle connection small. It outlives the server while a
  /// handler still holds a connection at shutdown, so `alive` tells a connection
  /// whether the server's counters are still there.
  struct connection_settings {
    connection_limits limits;
    listener_security security;
    std::atomic<bool> alive{true};
  };

  io_pool& pool_;
  tcp::acceptor acceptor_;
  /// Accepting again after a failed accept() waits on it.
  asio::steady_timer accept_pause_;
  listener_factory make_listener_;
  std::shared_ptr<traffic_recorder> capture_;
  std::shared_ptr<connection_settings> settings_;
  /// One per io context of the pool: its open connections and their deadlines.
  std::vector<std::shared_ptr<connection_sweep>> sweeps_;
  std::uint16_t port_ = 0;
  server_counters counters_;
  std::mutex mutex_;
  std::unordered_set<tcp_connection*> live_;
};

}  // namespace tgw::infra::net
