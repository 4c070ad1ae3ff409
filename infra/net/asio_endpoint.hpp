#pragma once

#include "infra/net/asio.hpp"
#include "infra/net/ip_endpoint.hpp"

namespace tgw::infra::net {

/// An Asio address and port as a connection and a capture record them: an IPv4 device
/// that a dual-stack socket sees as IPv4-mapped IPv6 is IPv4.
[[nodiscard]] ip_endpoint to_ip_endpoint(const asio::ip::address& address, std::uint16_t port);

template <class Endpoint>
[[nodiscard]] ip_endpoint to_ip_endpoint(const Endpoint& e) {
  return to_ip_endpoint(e.address(), e.port());
}

}  // namespace tgw::infra::net
