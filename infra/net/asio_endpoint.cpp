#include "infra/net/asio_endpoint.hpp"

#include <algorithm>

namespace tgw::infra::net {

ip_endpoint to_ip_endpoint(const asio::ip::address& address, std::uint16_t port) {
  ip_endpoint out;
  out.port = port;
  auto a = address;
  if (a.is_v6() && a.to_v6().is_v4_mapped())
    a = asio::ip::make_address_v4(asio::ip::v4_mapped, a.to_v6());
  if (a.is_v4()) {
    const auto b = a.to_v4().to_bytes();
    std::copy(b.begin(), b.end(), out.address.begin());
  } else {
    const auto b = a.to_v6().to_bytes();
    std::copy(b.begin(), b.end(), out.address.begin());
    out.v6 = true;
  }
  return out;
}

}  // namespace tgw::infra::net
