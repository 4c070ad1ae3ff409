#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <string>

namespace tgw::infra::net {

/// An IPv4 or IPv6 address and a TCP port, as a connection and a capture know them. IPv4 uses the
/// first 4 bytes of `address`; the rest stay zero so comparisons stay exact.
struct ip_endpoint {
  std::array<std::uint8_t, 16> address{};
  bool v6 = false;
  std::uint16_t port = 0;

  /// "1.2.3.4:5027" or "[::1]:5027".
  [[nodiscard]] std::string to_string() const;
  /// From "1.2.3.4" or "::1" and a port; false when the text is no address.
  static bool parse(const std::string& text, std::uint16_t port, ip_endpoint& out);

  friend auto operator<=>(const ip_endpoint&, const ip_endpoint&) = default;
};

}  // namespace tgw::infra::net
