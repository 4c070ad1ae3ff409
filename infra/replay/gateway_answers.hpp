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

/// For each prefix length n of `stream` (0..size), how many of its first n bytes are
/// answers to the device (handshake verdict, ACKs) rather than Codec 12/14 commands.
/// Commands come from an operator, not from what the device sent, so a replay cannot
/// reproduce them: it waits for and compares the answers alone.
[[nodiscard]] std::vector<std::size_t> answer_bytes(std::span<const std::uint8_t> stream);

/// `stream` without its command frames.
[[nodiscard]] std::vector<std::uint8_t> without_commands(std::span<const std::uint8_t> stream);

/// "handshake 01, 3 ACKs (1,1,2)" and the like, for reports.
[[nodiscard]] std::string describe(const gateway_answers& a);

/// How one replayed connection compares with its recording.
struct connection_report {
  std::size_t number = 0;
  std::string device;  ///< ip:port of the device side in the capture.
  std::string imei;    ///< From the handshake, empty when there was none.
  gateway_answers recorded;
  gateway_answers replayed;
  /// The gateway's answers (its bytes less command frames) are identical.
  bool bytes_equal = false;
  std::vector<std::string> problems;  ///< Capture problems and replay failures.

  [[nodiscard]] bool as_recorded() const { return bytes_equal && problems.empty(); }
};

/// One line of the per-connection report.
[[nodiscard]] std::string describe(const connection_report& r);

}  // namespace tgw::infra::replay
