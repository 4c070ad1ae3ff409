#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tgw::infra::metrics {

/// Why the instance refused a peer something: a connection, a frame, a datagram, a
/// new device, a handshake slot. Each is the `reason` of teltonika_refused_total and
/// names the budget that was spent (docs/OPERATIONS.md, "Hostile input").
enum class refusal : std::uint8_t {
  max_connections,     ///< --max-connections reached.
  address_rate,        ///< --per-address-rate: too many new connections from one address.
  address_handshakes,  ///< --per-address-handshakes: too many unfinished handshakes.
  address_sessions,    ///< --per-address-sessions: too many identified sessions.
  proxy_source,        ///< PROXY protocol on, the peer not in --proxy-from.
  proxy_header,        ///< A missing, malformed or oversized PROXY header.
  first_byte_timeout,  ///< Nothing sent within --first-byte-timeout-ms.
  handshake_timeout,   ///< No IMEI within --handshake-timeout-ms.
  tls_failed,          ///< The TLS handshake failed.
  tls_stalled,         ///< A TLS handshake step took longer than --tls-step-timeout-ms.
  tls_preempted,       ///< A stalled TLS handshake gave its slot to another address.
  before_imei,         ///< Bytes other than the IMEI before it (a keepalive flood).
  framing_error,       ///< The byte stream cannot be framed (bad preamble, length, codec).
  bad_frames,          ///< --max-bad-frames frames that failed to decode.
  write_queue,         ///< A device that does not read: --max-write-queue-bytes.
  bad_handshake,       ///< A malformed IMEI packet.
  allowlist,           ///< An IMEI the allowlist does not admit.
  new_device,          ///< An unknown IMEI past --new-devices-*: no keys made for it.
  udp_rate,            ///< --udp-per-address-rate: too many datagrams from one address.
  udp_backlog,         ///< --udp-backlog datagrams already waiting for the UDP actor.
  udp_bad_datagram,    ///< A datagram that does not decode.
  udp_devices,         ///< --udp-max-devices devices present already.
  command_text,        ///< A command whose text holds control characters.
};

inline constexpr std::array<std::string_view, 23> refusal_names = {
    "max_connections",  "address_rate", "address_handshakes", "address_sessions",
    "proxy_source",     "proxy_header", "first_byte_timeout", "handshake_timeout",
    "tls_failed",       "tls_stalled",  "tls_preempted",      "before_imei",
    "framing_error",    "bad_frames",   "write_queue",        "bad_handshake",
    "allowlist",        "new_device",   "udp_rate",           "udp_backlog",
    "udp_bad_datagram", "udp_devices",  "command_text"};

static_assert(static_cast<std::size_t>(refusal::command_text) + 1 == refusal_names.size(),
              "every refusal has a name");

[[nodiscard]] constexpr std::string_view name_of(refusal r) noexcept {
  return refusal_names[static_cast<std::size_t>(r)];
}

/// Refusals counted by reason; the data path only increments. One per instance,
/// shared by its listeners, sessions and UDP ingest.
class refusal_counters {
 public:
  void count(refusal r) noexcept {
    counts_[static_cast<std::size_t>(r)].fetch_add(1, std::memory_order_relaxed);
  }
  [[nodiscard]] std::uint64_t operator[](refusal r) const noexcept {
    return counts_[static_cast<std::size_t>(r)].load(std::memory_order_relaxed);
  }

 private:
  std::array<std::atomic<std::uint64_t>, refusal_names.size()> counts_{};
};

}  // namespace tgw::infra::metrics
