#include "infra/net/ip_endpoint.hpp"

#include <arpa/inet.h>

#include <cstring>

namespace tgw::infra::net {

std::string ip_endpoint::to_string() const {
  char text[INET6_ADDRSTRLEN] = {};
  if (v6) {
    inet_ntop(AF_INET6, address.data(), text, sizeof text);
    return "[" + std::string(text) + "]:" + std::to_string(port);
  }
  inet_ntop(AF_INET, address.data(), text, sizeof text);
  return std::string(text) + ":" + std::to_string(port);
}

bool ip_endpoint::parse(const std::string& text, std::uint16_t port_number, ip_endpoint& out) {
  ip_endpoint e;
  e.port = port_number;
  if (inet_pton(AF_INET, text.c_str(), e.address.data()) == 1) {
    out = e;
    return true;
  }
  if (inet_pton(AF_INET6, text.c_str(), e.address.data()) == 1) {
    e.v6 = true;
    out = e;
    return true;
  }
  return false;
}

}  // namespace tgw::infra::net
