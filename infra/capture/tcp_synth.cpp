#include "infra/capture/tcp_synth.hpp"

namespace tgw::infra::capture {
namespace {

void put16(std::vector<std::uint8_t>& out, std::uint32_t v) {
  out.push_back(static_cast<std::uint8_t>(v >> 8));
  out.push_back(static_cast<std::uint8_t>(v));
}

void put32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  put16(out, v >> 16);
  put16(out, v & 0xFFFF);
}

void set16(std::vector<std::uint8_t>& out, std::size_t at, std::uint32_t v) {
  out[at] = static_cast<std::uint8_t>(v >> 8);
  out[at + 1] = static_cast<std::uint8_t>(v);
}

// One's-complement sum of 16-bit words, unfolded.
std::uint32_t sum16(std::span<const std::uint8_t> bytes, std::uint32_t sum = 0) {
  std::size_t i = 0;
  for (; i + 1 < bytes.size(); i += 2)
    sum += static_cast<std::uint32_t>(bytes[i] << 8 | bytes[i + 1]);
  if (i < bytes.size()) sum += static_cast<std::uint32_t>(bytes[i] << 8);
  return sum;
}

std::uint16_t fold(std::uint32_t sum) {
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<std::uint16_t>(~sum & 0xFFFF);
}

// Locally administered MAC addresses derived from the IP, so each host keeps one.
void put_mac(std::vector<std::uint8_t>& out, const net::ip_endpoint& e) {
  out.push_back(0x02);
  out.push_back(0x00);
  const std::size_t last = e.v6 ? 12 : 0;
  for (std::size_t i = 0; i < 4; ++i) out.push_back(e.address[last + i]);
}

}  // namespace

void append_ethernet_tcp(std::vector<std::uint8_t>& out, const tcp_segment_spec& s) {
  put_mac(out, s.to);
  put_mac(out, s.from);
  put16(out, s.from.v6 ? 0x86DD : 0x0800);

  const std::size_t tcp_length = 20 + s.payload.size();
  const std::size_t ip_at = out.size();
  const std::size_t address_size = s.from.v6 ? 16 : 4;
  if (s.from.v6) {
    put32(out, 0x60000000);
    put16(out, static_cast<std::uint32_t>(tcp_length));
    out.push_back(6);   // next header: TCP
    out.push_back(64);  // hop limit
  } else {
    out.push_back(0x45);
    out.push_back(0);
    put16(out, static_cast<std::uint32_t>(20 + tcp_length));
    put16(out, 0);       // identification
    put16(out, 0x4000);  // don't fragment
    out.push_back(64);
    out.push_back(6);
    put16(out, 0);  // header checksum, below
  }
  out.insert(out.end(), s.from.address.begin(),
             s.from.address.begin() + static_cast<std::ptrdiff_t>(address_size));
  out.insert(out.end(), s.to.address.begin(),
             s.to.address.begin() + static_cast<std::ptrdiff_t>(address_size));
  if (!s.from.v6) set16(out, ip_at + 10, fold(sum16(std::span(out).subspan(ip_at, 20))));

  const std::size_t tcp_at = out.size();
  put16(out, s.from.port);
  put16(out, s.to.port);
  put32(out, s.seq);
  put32(out, s.ack);
  out.push_back(0x50);  // 20-byte header, no options
  out.push_back(s.flags);
  put16(out, 0xFFFF);  // window
  put16(out, 0);       // checksum, below
  put16(out, 0);       // urgent pointer
  out.insert(out.end(), s.payload.begin(), s.payload.end());

  // The pseudo-header: addresses, protocol and TCP length.
  std::uint32_t sum = sum16(std::span(s.from.address).first(address_size));
  sum = sum16(std::span(s.to.address).first(address_size), sum);
  sum += 6;
  sum += static_cast<std::uint32_t>(tcp_length & 0xFFFF) +
         static_cast<std::uint32_t>(tcp_length >> 16);
  sum = sum16(std::span(out).subspan(tcp_at), sum);
  set16(out, tcp_at + 16, fold(sum));
}

}  // namespace tgw::infra::capture
