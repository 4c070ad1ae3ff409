#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "infra/net/ip_endpoint.hpp"

namespace tgw::infra::net {

/// Which PROXY protocol header a device connection must start with: none, the text
/// form (v1), the binary form (v2) or either. A balancer in front of the gateway
/// (HAProxy, nginx stream, a cloud L4 balancer) writes it before the first byte of
/// the device, so the gateway learns the device's own address.
enum class proxy_mode : std::uint8_t { off, v1, v2, any };

std::optional<proxy_mode> parse_proxy_mode(std::string_view text);
std::string_view to_string(proxy_mode mode);

/// The longest header accepted. v1 is at most 107 bytes by its specification; v2
/// carries its length and may append TLVs (cloud balancers add an endpoint id or a
/// link id of a few dozen bytes). Anything longer is refused rather than buffered.
inline constexpr std::size_t max_proxy_header = 512;

/// What a header says.
struct proxy_header {
  int version = 0;
  /// False for a balancer's own health check (v2 LOCAL, v1 UNKNOWN, v2 with an
  /// unspecified family): the connection's own addresses stay in force.
  bool has_addresses = false;
  ip_endpoint source;       ///< The device.
  ip_endpoint destination;  ///< The address the device connected to.
};

enum class proxy_status : std::uint8_t { need_more, ok, error };

struct proxy_parse {
  proxy_status status = proxy_status::need_more;
  /// Bytes the header occupies; the device's own bytes start right after.
  std::size_t length = 0;
  proxy_header header;
  std::string error;  ///< Why the bytes are no acceptable header.
};

/// Parses the header at the start of `bytes`, the first bytes of a connection.
/// need_more: every byte so far fits a header of `mode` but it is incomplete (read
/// more, up to max_proxy_header). error: the bytes are no such header, or it is
/// malformed or too long. Never reads past `bytes`.
proxy_parse parse_proxy_header(std::span<const std::uint8_t> bytes, proxy_mode mode);

}  // namespace tgw::infra::net
