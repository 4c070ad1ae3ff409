#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "actors/domain/udp_backlog.hpp"
#include "actors/ports/udp_reply.hpp"
#include "infra/net/address_limits.hpp"
#include "infra/net/asio.hpp"
#include "infra/net/ip_prefix.hpp"

namespace tgw::infra::metrics {
class refusal_counters;
}

namespace tgw::infra::net {

/// What a UDP port lets one source spend before a datagram reaches the session layer.
struct udp_limits {
  /// Datagrams per second per source address (its rate and burst); null: no limit.
  /// Sources are spoofable: this bounds a real sender, the backlog bounds everyone.
  std::shared_ptr<address_limits> per_address;
  /// Sources exempt from `per_address` (--trusted-sources).
  std::vector<ip_prefix> trusted;
  /// Datagrams handed on and not yet taken up; over it they are dropped. Null: none.
  std::shared_ptr<domain::udp_backlog> backlog;
  /// Where drops are counted; null: nowhere.
  std::shared_ptr<metrics::refusal_counters> refusals;
};

/// Receives UDP datagrams on one socket and hands each to `on_datagram` with a reply
/// function and the sender as ip:port, within `limits`: a datagram over its source's
/// rate or the backlog is dropped on the io thread, counted, and never copied.
/// Replies are posted to the socket's strand, so the session layer never touches the
/// socket.
class udp_server {
 public:
  using handler = std::function<void(std::vector<std::uint8_t> datagram, ports::udp_reply reply,
                                     std::string peer)>;

  udp_server(asio::io_context& io, const udp::endpoint& where, handler on_datagram,
             udp_limits limits = {});
  ~udp_server();
  void start();
  void stop();
  [[nodiscard]] std::uint16_t port() const { return port_; }
  [[nodiscard]] std::uint64_t received() const { return received_.load(); }

 private:
  struct state;
  std::shared_ptr<state> state_;
  std::uint16_t port_ = 0;
  std::atomic<std::uint64_t> received_{0};
};

}  // namespace tgw::infra::net
