#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "infra/sim/latency_histogram.hpp"

namespace tgw::infra::sim {

/// Plain totals of a fleet run. Each counter is also a field of fleet_counters.
struct fleet_totals {
  std::uint64_t connects = 0;             ///< TCP connections established (UDP: sockets opened).
  std::uint64_t connect_failures = 0;     ///< Connection attempts that failed.
  std::uint64_t disconnects = 0;          ///< Connections lost that the device did not close.
  std::uint64_t handshakes_accepted = 0;  ///< IMEI verdicts 01.
  std::uint64_t handshakes_rejected = 0;  ///< IMEI verdicts 00: the device stops.
  std::uint64_t handshake_timeouts = 0;   ///< No verdict (or no connection) within the timeout.
  std::uint64_t packets_sent = 0;         ///< Distinct packets sent; a resend is not counted.
  std::uint64_t packets_acked = 0;        ///< Packets whose ACK carried the right count.
  std::uint64_t records_sent = 0;         ///< Records in packets_sent.
  std::uint64_t records_acked = 0;        ///< Records in packets_acked.
  std::uint64_t resends = 0;              ///< Retransmissions: timeout, wrong count, reconnect.
  std::uint64_t ack_timeouts = 0;         ///< ACK waits that timed out (bad-CRC packets excluded).
  std::uint64_t ack_mismatches = 0;       ///< ACKs whose count differed from the records sent.
  std::uint64_t unexpected_bytes = 0;     ///< Server bytes that fit no state (stray ACKs, junk).
  std::uint64_t bad_crc_sent = 0;         ///< Packets first sent with a corrupted CRC.
  std::uint64_t bad_crc_unacked = 0;      ///< Of those, the gateway rightly never ACKed.
  std::uint64_t bad_crc_acked = 0;        ///< Of those, the gateway ACKed: a gateway bug.
  std::uint64_t commands_received = 0;    ///< Codec 12/14 commands decoded.
  std::uint64_t commands_replied = 0;     ///< Codec 12 responses and Codec 14 ACKs sent.
  std::uint64_t commands_nacked = 0;      ///< Codec 14 nACKs sent (the IMEI did not match).
  std::uint64_t commands_ignored = 0;     ///< Left unanswered (--ignore-command-share).
  std::uint64_t commands_invalid = 0;     ///< Frames from the server that did not decode.
  std::uint64_t packets_unacked = 0;      ///< Packets still waiting for their ACK at the end.
  std::uint64_t devices_finished = 0;     ///< Devices that sent all their packets.

  /// Faults a healthy gateway does not cause (the progress line's "errors").
  [[nodiscard]] std::uint64_t errors() const noexcept {
    return connect_failures + disconnects + handshake_timeouts + ack_timeouts + ack_mismatches +
           unexpected_bytes + bad_crc_acked + commands_invalid;
  }
};

/// The same counters, shared by every device of a fleet and bumped from io threads.
/// Relaxed atomics: a device touches a few per packet, and readers only need totals.
struct fleet_counters {
  std::atomic<std::uint64_t> connects{0}, connect_failures{0}, disconnects{0},
      handshakes_accepted{0}, handshakes_rejected{0}, handshake_timeouts{0}, packets_sent{0},
      packets_acked{0}, records_sent{0}, records_acked{0}, resends{0}, ack_timeouts{0},
      ack_mismatches{0}, unexpected_bytes{0}, bad_crc_sent{0}, bad_crc_unacked{0}, bad_crc_acked{0},
      commands_received{0}, commands_replied{0}, commands_nacked{0}, commands_ignored{0},
      commands_invalid{0}, packets_unacked{0}, devices_finished{0};
  std::atomic<std::int64_t> connected{0};  ///< Devices with an open, accepted connection now.
  latency_histogram ack_latency;           ///< Whole run.
  latency_histogram ack_latency_interval;  ///< Since the last progress line.

  [[nodiscard]] fleet_totals totals() const noexcept;
};

/// Adds 1 (or `n`) to a shared counter.
inline void bump(std::atomic<std::uint64_t>& counter, std::uint64_t n = 1) noexcept {
  counter.fetch_add(n, std::memory_order_relaxed);
}

/// What a finished (or stopped) run reports.
struct fleet_report {
  std::uint64_t devices = 0;
  fleet_totals totals;
  double ack_p50_ms = 0.0;
  double ack_p99_ms = 0.0;
  double ack_max_ms = 0.0;
  double elapsed_s = 0.0;

  [[nodiscard]] double records_per_second() const noexcept {
    return elapsed_s > 0 ? static_cast<double>(totals.records_acked) / elapsed_s : 0.0;
  }
};

/// The report as one JSON object (the --json summary), fields in a fixed order.
[[nodiscard]] nlohmann::ordered_json to_json(const fleet_report& report);
/// The report as a few aligned lines of text (the default summary).
[[nodiscard]] std::string to_text(const fleet_report& report);

}  // namespace tgw::infra::sim
