#pragma once

// Writes pcap files with exactly the segments a test wants: in order or not,
// retransmitted, overlapping, from several connections interleaved, IPv4 or IPv6.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "infra/capture/pcap_file.hpp"
#include "infra/capture/tcp_synth.hpp"
#include "infra/net/ip_endpoint.hpp"

namespace tgw::test {

class capture_builder {
 public:
  using bytes = std::vector<std::uint8_t>;
  using endpoint = infra::net::ip_endpoint;

  static endpoint at(const std::string& address, std::uint16_t port) {
    endpoint e;
    infra::net::ip_endpoint::parse(address, port, e);
    return e;
  }

  /// SYN, SYN-ACK, ACK; returns the connection's handle.
  std::size_t open(const endpoint& device, const endpoint& gateway, std::int64_t t_us) {
    const auto n = static_cast<std::uint32_t>(connections_.size());
    connections_.push_back({device, gateway, 1000 + n * 100'000, 5000 + n * 100'000});
    auto& c = connections_.back();
    segment(c, true, t_us, c.device_seq, infra::capture::tcp_flags::syn, {});
    segment(c, false, t_us, c.gateway_seq,
            infra::capture::tcp_flags::syn | infra::capture::tcp_flags::ack, {});
    ++c.device_seq;
    ++c.gateway_seq;
    segment(c, true, t_us, c.device_seq, infra::capture::tcp_flags::ack, {});
    return connections_.size() - 1;
  }
  /// One in-order segment of `data`.
  void send(std::size_t id, bool from_device, std::int64_t t_us, const bytes& data) {
    auto& c = connections_[id];
    auto& seq = from_device ? c.device_seq : c.gateway_seq;
    segment(c, from_device, t_us, seq, psh_ack, data);
    seq += static_cast<std::uint32_t>(data.size());
  }
  /// A segment at stream offset `offset` from the next in-order byte, sequence not
  /// advanced: for out-of-order and retransmitted segments; advance() afterwards.
  void send_at(std::size_t id, bool from_device, std::int64_t t_us, std::int64_t offset,
               const bytes& data) {
    auto& c = connections_[id];
    const auto seq =
        (from_device ? c.device_seq : c.gateway_seq) + static_cast<std::uint32_t>(offset);
    segment(c, from_device, t_us, seq, psh_ack, data);
  }
  void advance(std::size_t id, bool from_device, std::size_t n) {
    auto& c = connections_[id];
    (from_device ? c.device_seq : c.gateway_seq) += static_cast<std::uint32_t>(n);
  }
  /// FIN from the closing side, FIN back, last ACK.
  void close(std::size_t id, std::int64_t t_us, bool by_device = true) {
    auto& c = connections_[id];
    const std::uint8_t fin = infra::capture::tcp_flags::fin | infra::capture::tcp_flags::ack;
    segment(c, by_device, t_us, by_device ? c.device_seq : c.gateway_seq, fin, {});
    ++(by_device ? c.device_seq : c.gateway_seq);
    segment(c, !by_device, t_us, by_device ? c.gateway_seq : c.device_seq, fin, {});
    ++(by_device ? c.gateway_seq : c.device_seq);
    segment(c, by_device, t_us, by_device ? c.device_seq : c.gateway_seq,
            infra::capture::tcp_flags::ack, {});
  }
  bool write(const std::string& path) const {
    infra::capture::pcap_file f;
    std::string error;
    if (!f.open(path, error)) return false;
    for (const auto& [t, p] : packets_)
      if (!f.write(t, p)) return false;
    return true;
  }

 private:
  static constexpr std::uint8_t psh_ack =
      infra::capture::tcp_flags::psh | infra::capture::tcp_flags::ack;
  struct connection {
    endpoint device;
    endpoint gateway;
    std::uint32_t device_seq;
    std::uint32_t gateway_seq;
  };
  void segment(const connection& c, bool from_device, std::int64_t t_us, std::uint32_t seq,
               std::uint8_t flags, const bytes& data) {
    infra::capture::tcp_segment_spec s;
    s.from = from_device ? c.device : c.gateway;
    s.to = from_device ? c.gateway : c.device;
    s.seq = seq;
    s.ack = from_device ? c.gateway_seq : c.device_seq;
    s.flags = flags;
    s.payload = data;
    bytes packet;
    infra::capture::append_ethernet_tcp(packet, s);
    packets_.emplace_back(t_us, std::move(packet));
  }

  std::vector<connection> connections_;
  std::vector<std::pair<std::int64_t, bytes>> packets_;
};

}  // namespace tgw::test
