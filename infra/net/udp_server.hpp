#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "infra/net/asio.hpp"
#include "infra/net/udp_server_reply.hpp"

namespace tgw::infra::net {

/// Receives UDP datagrams on one socket and hands each to `on_datagram` with a reply
/// function and the sender as ip:port. Replies are posted to the socket's strand, so the session
/// layer never touches the socket.
class udp_server {
 public:
  using handler =
      std::function<void(std::vector<std::uint8_t> datagram, udp_reply reply, std::string peer)>;

  udp_server(asio::io_context& io, const udp::endpoint& where, handler on_datagram);
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
