#include "infra/capture/packet_parser.hpp"

#include <algorithm>
#include <cstring>

namespace tgw::infra::capture {
namespace {

// pcap DLT values (pcap/dlt.h), spelled out so this file needs no libpcap header.
constexpr int dlt_null = 0;
constexpr int dlt_ethernet = 1;
constexpr int dlt_raw_a = 12;
constexpr int dlt_raw_b = 14;
constexpr int dlt_raw = 101;
constexpr int dlt_loop = 108;
constexpr int dlt_linux_sll = 113;
constexpr int dlt_linux_sll2 = 276;

constexpr std::uint16_t ethertype_ipv4 = 0x0800;
constexpr std::uint16_t ethertype_ipv6 = 0x86DD;

std::uint16_t be16(std::span<const std::uint8_t> d, std::size_t at) {
  return static_cast<std::uint16_t>(d[at] << 8 | d[at + 1]);
}

std::uint32_t be32(std::span<const std::uint8_t> d, std::size_t at) {
  return static_cast<std::uint32_t>(be16(d, at)) << 16 | be16(d, at + 2);
}

// Finds where the IP packet starts and its ethertype; false when not IP.
parse_outcome link_layer(int linktype, std::span<const std::uint8_t> d, std::size_t& at,
                         std::uint16_t& ethertype, std::string& why) {
  switch (linktype) {
    case dlt_ethernet: {
      if (d.size() < 14) {
        why = "Ethernet header cut short";
        return parse_outcome::malformed;
      }
      at = 12;
      ethertype = be16(d, at);
      at += 2;
      // 802.1Q / 802.1ad tags, possibly stacked.
      while (ethertype == 0x8100 || ethertype == 0x88A8) {
        if (d.size() < at + 4) {
          why = "VLAN tag cut short";
          return parse_outcome::malformed;
        }
        ethertype = be16(d, at + 2);
        at += 4;
      }
      return parse_outcome::tcp;
    }
    case dlt_linux_sll:
      if (d.size() < 16) {
        why = "Linux cooked header cut short";
        return parse_outcome::malformed;
      }
      ethertype = be16(d, 14);
      at = 16;
      return parse_outcome::tcp;
    case dlt_linux_sll2:
      if (d.size() < 20) {
        why = "Linux cooked v2 header cut short";
        return parse_outcome::malformed;
      }
      ethertype = be16(d, 0);
      at = 20;
      return parse_outcome::tcp;
    case dlt_raw:
    case dlt_raw_a:
    case dlt_raw_b:
      if (d.empty()) {
        why = "empty packet";
        return parse_outcome::malformed;
      }
      at = 0;
      ethertype = (d[0] >> 4) == 6 ? ethertype_ipv6 : ethertype_ipv4;
      return parse_outcome::tcp;
    case dlt_null:
    case dlt_loop: {
      if (d.size() < 4) {
        why = "loopback header cut short";
        return parse_outcome::malformed;
      }
      // The family is in host byte order of the capturing machine (DLT_NULL) or
      // network order (DLT_LOOP); the IP version nibble settles it either way.
      at = 4;
      if (d.size() <= at) return parse_outcome::other;
      const int version = d[at] >> 4;
      if (version != 4 && version != 6) return parse_outcome::other;
      ethertype = version == 6 ? ethertype_ipv6 : ethertype_ipv4;
      return parse_outcome::tcp;
    }
    default:
      why = "unsupported link type " + std::to_string(linktype);
      return parse_outcome::malformed;
  }
}

}  // namespace

parse_outcome parse_packet(int linktype, std::span<const std::uint8_t> d,
                           std::size_t original_length, tcp_packet& out, std::string& why) {
  std::size_t at = 0;
  std::uint16_t ethertype = 0;
  if (const auto r = link_layer(linktype, d, at, ethertype, why); r != parse_outcome::tcp) return r;
  if (ethertype != ethertype_ipv4 && ethertype != ethertype_ipv6) return parse_outcome::other;

  // What the wire had beyond the captured bytes.
  const std::size_t cut = original_length > d.size() ? original_length - d.size() : 0;
  std::size_t ip_end = 0;  // end of the IP payload within the captured data
  std::size_t ip_wire_end = 0;
  tcp_packet p;
  std::uint8_t protocol = 0;
  if (ethertype == ethertype_ipv4) {
    if (d.size() < at + 20 || (d[at] >> 4) != 4) {
      why = "IPv4 header cut short or wrong version";
      return parse_outcome::malformed;
    }
    const std::size_t ihl = static_cast<std::size_t>(d[at] & 0x0F) * 4;
    const std::size_t total = be16(d, at + 2);
    if (ihl < 20 || total < ihl || d.size() < at + ihl) {
      why = "IPv4 header length " + std::to_string(ihl) + " / total " + std::to_string(total) +
            " inconsistent";
      return parse_outcome::malformed;
    }
    const std::uint16_t fragment = be16(d, at + 6);
    protocol = d[at + 9];
    if (protocol != 6) return parse_outcome::other;
    if ((fragment & 0x3FFF) != 0) {
      why = "IPv4 fragment (fragments are not reassembled)";
      return parse_outcome::malformed;
    }
    std::copy_n(d.begin() + static_cast<std::ptrdiff_t>(at + 12), 4, p.from.address.begin());
    std::copy_n(d.begin() + static_cast<std::ptrdiff_t>(at + 16), 4, p.to.address.begin());
    ip_wire_end = at + total;
    at += ihl;
  } else {
    if (d.size() < at + 40 || (d[at] >> 4) != 6) {
      why = "IPv6 header cut short or wrong version";
      return parse_outcome::malformed;
    }
    p.from.v6 = p.to.v6 = true;
    std::copy_n(d.begin() + static_cast<std::ptrdiff_t>(at + 8), 16, p.from.address.begin());
    std::copy_n(d.begin() + static_cast<std::ptrdiff_t>(at + 24), 16, p.to.address.begin());
    ip_wire_end = at + 40 + be16(d, at + 4);
    protocol = d[at + 6];
    at += 40;
    // Hop-by-hop, routing and destination options headers are skipped.
    while (protocol == 0 || protocol == 43 || protocol == 60) {
      if (d.size() < at + 2) {
        why = "IPv6 extension header cut short";
        return parse_outcome::malformed;
      }
      protocol = d[at];
      at += (static_cast<std::size_t>(d[at + 1]) + 1) * 8;
    }
    if (protocol == 44) {
      why = "IPv6 fragment (fragments are not reassembled)";
      return parse_outcome::malformed;
    }
    if (protocol != 6) return parse_outcome::other;
  }
  // Ethernet pads short frames; the IP length says where the packet really ends.
  ip_end = std::min(ip_wire_end, d.size());
  if (ip_wire_end > d.size() + cut) {
    why = "IP length exceeds the packet";
    return parse_outcome::malformed;
  }
  if (ip_end < at + 20) {
    why = "TCP header cut short";
    return parse_outcome::malformed;
  }
  const std::size_t tcp_header = static_cast<std::size_t>(d[at + 12] >> 4) * 4;
  if (tcp_header < 20 || ip_end < at + tcp_header) {
    why = "TCP header length " + std::to_string(tcp_header) + " inconsistent";
    return parse_outcome::malformed;
  }
  p.from.port = be16(d, at);
  p.to.port = be16(d, at + 2);
  p.seq = be32(d, at + 4);
  p.flags = d[at + 13];
  p.payload = d.subspan(at + tcp_header, ip_end - at - tcp_header);
  p.missing = ip_wire_end - ip_end;
  out = p;
  return parse_outcome::tcp;
}

}  // namespace tgw::infra::capture
