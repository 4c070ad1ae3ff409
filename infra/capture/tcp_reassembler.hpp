#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "infra/capture/packet_parser.hpp"
#include "infra/capture/recorded_connection.hpp"

namespace tgw::infra::capture {

/// Rebuilds TCP connections from captured segments: both directions in sequence
/// order whatever the capture order, retransmissions and overlaps counted once, any
/// number of connections interleaved, a new SYN on a finished 4-tuple starting a new
/// connection. The device side is the one whose stream opens with an IMEI handshake,
/// else the one talking to `device_port`, else the one that sent the SYN.
class tcp_reassembler {
 public:
  explicit tcp_reassembler(std::uint16_t device_port) : device_port_(device_port) {}

  /// One segment, in capture order.
  void add(std::int64_t unix_us, const tcp_packet& p);
  /// The connections seen, in order of their first packet; the reassembler is spent.
  std::vector<recorded_connection> finish();

 private:
  struct direction {
    bool based = false;
    std::uint32_t base = 0;  ///< Sequence number of stream offset 0.
    std::uint64_t next = 0;  ///< Stream offset of the next byte expected.
    std::map<std::uint64_t, std::vector<std::uint8_t>> pending;
    bool fin = false;
    std::uint64_t fin_at = 0;
    bool done = false;  ///< FIN reached in order, or RST.
    std::uint64_t delivered = 0;
    std::vector<std::uint8_t> head;  ///< The stream's first bytes, to spot a handshake.
  };
  struct connection {
    recorded_connection rec;  ///< device = side a, gateway = side b until finish().
    direction a;              ///< The side that sent the SYN (or the first packet).
    direction b;
    /// Problems by side (true: side a), named device or gateway once that is known.
    std::vector<std::pair<bool, std::string>> problems;
    bool saw_syn = false;
    bool ended = false;
  };

  std::uint64_t offset_of(const direction& d, std::uint32_t seq) const;
  void deliver(connection& c, bool from_a, std::int64_t unix_us, std::span<const std::uint8_t>);
  void accept_data(connection& c, bool from_a, std::int64_t unix_us, std::uint32_t seq,
                   std::span<const std::uint8_t> payload);
  void check_end(connection& c, bool from_a, std::int64_t unix_us);

  std::uint16_t device_port_;
  std::vector<connection> connections_;
  /// 4-tuple (lower endpoint first) to the live connection's index.
  std::map<std::pair<net::ip_endpoint, net::ip_endpoint>, std::size_t> live_;
  std::uint64_t order_ = 0;
};

}  // namespace tgw::infra::capture
