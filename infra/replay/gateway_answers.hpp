#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tgw::infra::replay {

/// What a gateway said to a device over one connection, read from its byte stream:
/// the handshake verdict, then 4-byte AVL ACKs and Codec 12/14 command frames.
struct gateway_answers {
  int handshake = -1;  ///< 1 accepted, 0 rejected, -1 none.
  std::vector<std::uint32_t> acks;
  std::size_t commands = 0;
  std::size_t trailing = 0;  ///< Bytes that form no complete answer.

  friend bool operator==(const gateway_answers&, const gateway_answers&) = default;
};

/// Splits a gateway-to-device byte stream into its answers.
[[nodiscard]] gateway_answers read_answers(std::span<const std::uint8_t> stream);

/// "handshake 01, 3 ACKs (1,1,2)" and the like, for reports.
[[nodiscard]] std::string describe(const gateway_answers& a);

/// How one replayed connection compares with its recording.
struct connection_report {
  std::size_t number = 0;
  std::string device;  ///< ip:port of the device side in the capture.
  std::string imei;    ///< From the handshake, empty when there was none.
  gateway_answers recorded;
  gateway_answers replayed;
  bool bytes_equal = false;           ///< The gateway's byte streams are identical.
  std::vector<std::string> problems;  ///< Capture problems and replay failures.

  [[nodiscard]] bool as_recorded() const { return bytes_equal && problems.empty(); }
};

/// One line of the per-connection report.
[[nodiscard]] std::string describe(const connection_report& r);

}  // namespace tgw::infra::replay
