#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "infra/net/ip_endpoint.hpp"

namespace tgw::infra::capture {

/// TCP header flags.
namespace tcp_flags {
inline constexpr std::uint8_t fin = 0x01;
inline constexpr std::uint8_t syn = 0x02;
inline constexpr std::uint8_t rst = 0x04;
inline constexpr std::uint8_t psh = 0x08;
inline constexpr std::uint8_t ack = 0x10;
}  // namespace tcp_flags

/// Largest payload of one synthesised segment: it keeps the IPv4 total length and the
/// IPv6 payload length within 16 bits.
inline constexpr std::size_t max_segment_payload = 65'000;

/// One TCP segment to synthesise.
struct tcp_segment_spec {
  net::ip_endpoint from;
  net::ip_endpoint to;
  std::uint32_t seq = 0;
  std::uint32_t ack = 0;
  std::uint8_t flags = tcp_flags::ack;
  std::span<const std::uint8_t> payload;
};

/// Appends an Ethernet II frame holding an IPv4 or IPv6 packet (by `from.v6`) with the
/// TCP segment, checksums filled in, so Wireshark and tshark accept and reassemble it.
/// Both endpoints must be of the same family; payloads above max_segment_payload are
/// the caller's to split.
void append_ethernet_tcp(std::vector<std::uint8_t>& out, const tcp_segment_spec& s);

}  // namespace tgw::infra::capture
