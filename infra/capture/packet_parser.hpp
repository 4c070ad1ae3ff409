#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "infra/net/ip_endpoint.hpp"

namespace tgw::infra::capture {

/// One TCP segment as a capture shows it. `payload` borrows the packet.
struct tcp_packet {
  net::ip_endpoint from;
  net::ip_endpoint to;
  std::uint32_t seq = 0;
  std::uint8_t flags = 0;
  std::span<const std::uint8_t> payload;
  /// Payload bytes the capture cut off (snap length); the stream has a gap there.
  std::size_t missing = 0;
};

enum class parse_outcome : std::uint8_t {
  tcp,        ///< `out` holds the segment.
  other,      ///< Well-formed, but not TCP over IPv4/IPv6 (ARP, UDP, ...): skipped.
  malformed,  ///< `why` says what is wrong.
};

/// Parses a captured link-layer frame down to TCP: Ethernet (with VLAN tags), Linux
/// cooked (SLL and SLL2), raw IP and BSD loopback; IPv4 and IPv6 (extension headers
/// skipped). IP fragments are reported as malformed: reassembling them is not done.
/// `linktype` is the pcap DLT value, `original_length` the packet's length on the
/// wire (more than data.size() when the snap length cut it).
parse_outcome parse_packet(int linktype, std::span<const std::uint8_t> data,
                           std::size_t original_length, tcp_packet& out, std::string& why);

}  // namespace tgw::infra::capture
