#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "infra/net/ip_endpoint.hpp"

namespace tgw::infra::net {

/// An address block, "10.0.0.0/8" or "2001:db8::/32"; the port is not part of it.
struct ip_prefix {
  ip_endpoint network;
  unsigned bits = 0;

  /// Whether `address` (IPv4-mapped IPv6 taken as the IPv4 address it carries) lies in
  /// the block; an IPv4 address never lies in an IPv6 block, nor the other way round.
  [[nodiscard]] bool contains(const ip_endpoint& address) const;
  /// "10.0.0.0/8", "2001:db8::/32".
  [[nodiscard]] std::string to_string() const;
};

/// Parses "CIDR[,CIDR...]"; an address without "/bits" is the block of that address
/// alone. Nullopt with `error` naming the entry for anything else: no address, bits
/// out of range, or bits set past the prefix ("10.0.0.1/8" is refused, not read as
/// 10.0.0.0/8, so that a typo does not widen the block silently).
std::optional<std::vector<ip_prefix>> parse_prefixes(std::string_view text, std::string& error);

/// 127.0.0.0/8 and ::1/128, the default balancers: the gateway's own host.
std::vector<ip_prefix> loopback_prefixes();

/// An IPv4-mapped IPv6 address (::ffff:a.b.c.d) or a NAT64 one of the well-known
/// prefix (64:ff9b::a.b.c.d) as the IPv4 address a.b.c.d; any other address
/// unchanged. A dual-stack socket, a balancer or a NAT64 gateway may give another form
/// of one device's IPv4 address, and every form must be one address to the limits.
ip_endpoint unmapped(const ip_endpoint& address);

/// `address` with every bit after the first `bits` cleared (the port kept).
ip_endpoint masked(const ip_endpoint& address, unsigned bits);

}  // namespace tgw::infra::net
