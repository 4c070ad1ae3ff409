#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "codecs/codec_id.hpp"

namespace tgw::infra::sim {

/// How simulated devices reach the gateway.
enum class transport_kind : std::uint8_t { tcp, udp };

/// Everything a simulated fleet is told; `tgw simulate` fills it from flags.
struct fleet_options {
  std::size_t count = 1;  ///< Number of devices.
  codecs::codec_id codec = codecs::codec_id::codec8e;
  std::size_t records_per_packet = 1;
  std::size_t io_per_record = 8;
  /// Pause between an ACK and the next packet.
  std::chrono::milliseconds send_interval{1000};
  /// When not zero, replaces send_interval with a fixed schedule, as a tracker's send
  /// period: the next packet is due this long after the previous one first went out,
  /// or at once if its ACK came later. A fleet then offers count / period packets a
  /// second whatever the ACK latency, as long as it stays under the period.
  std::chrono::milliseconds send_period{0};
  /// Device i starts ramp_up * i / count after the fleet starts.
  std::chrono::milliseconds ramp_up{0};
  /// The fleet stops after this long; zero runs until the packets are sent or stop().
  std::chrono::milliseconds duration{0};
  /// ACKed packets after which a device closes and finishes; zero means no limit.
  std::uint64_t packets_per_device = 0;

  std::string target_host = "127.0.0.1";
  std::uint16_t target_port = 5027;
  transport_kind transport = transport_kind::tcp;
  /// TLS over TCP, as a Teltonika device with "Encryption: TLS" does.
  bool tls = false;
  /// PEM CAs the gateway's certificate must chain to; empty: not checked (a load
  /// generator, not a device that must trust the server).
  std::string tls_ca_file;
  /// A client certificate and key (PEM) for gateways that require one
  /// (`tgw serve --tls-client-ca`); empty: none.
  std::string tls_cert_file;
  std::string tls_key_file;
  /// Highest TLS version offered: "1.2", as Teltonika firmware speaks, or "1.3".
  std::string tls_version = "1.2";

  /// How long a device waits for the ACK (and for the handshake verdict) before it
  /// sends the same packet again, as a tracker's "Server Response Timeout" does.
  std::chrono::milliseconds ack_timeout{5000};
  bool reconnect = true;
  std::chrono::milliseconds reconnect_delay{1000};       ///< First backoff.
  std::chrono::milliseconds reconnect_max_delay{30000};  ///< Backoff ceiling.

  /// Share of packets first sent with a corrupted CRC (TCP only).
  double bad_crc_share = 0.0;

  /// Reply text to a command; "{command}" stands for the command's text.
  std::string reply_text = "OK {command}";
  std::chrono::milliseconds reply_delay{0};
  double ignore_command_share = 0.0;

  std::uint64_t imei_base = 350000000000000;
  /// Spread device sockets over this many loopback source addresses (0: let the
  /// kernel choose), to get past the ephemeral ports of a single address.
  std::size_t source_spread = 0;
  std::size_t io_threads = 1;
  std::uint64_t seed = 1;
  /// When set, every ACKed packet is logged to this file (see acked_log).
  std::string acked_log_path;
};

/// How long a device waits after an ACK before it sends its next packet: the
/// send interval, or with a send period the rest of the period that began when the
/// acknowledged packet first went out (zero if the ACK came later).
[[nodiscard]] std::chrono::milliseconds next_packet_delay(
    const fleet_options& options, std::chrono::steady_clock::time_point first_sent,
    std::chrono::steady_clock::time_point acked);

/// Checks the options against each other; an empty string when they are usable.
[[nodiscard]] std::string validate(const fleet_options& options);

/// Parses "250ms", "5s", "1.5s", "2m", "1h"; a bare number is seconds.
[[nodiscard]] std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);

/// Parses "host:port" or "[v6-address]:port" into `host` and `port`; false if malformed.
[[nodiscard]] bool parse_target(std::string_view text, std::string& host, std::uint16_t& port);

/// Parses "8", "8E" (or "8e") and "16".
[[nodiscard]] std::optional<codecs::codec_id> parse_avl_codec(std::string_view text);

/// The source address of device `index` under `spread` addresses: 127.0.0.1 + index % spread,
/// as a host-order IPv4 value.
[[nodiscard]] constexpr std::uint32_t spread_source_address(std::size_t index,
                                                            std::size_t spread) noexcept {
  return 0x7F000001U + static_cast<std::uint32_t>(index % spread);
}

/// The most source addresses --source-spread accepts: all of 127.0.0.1 .. 127.0.255.254.
inline constexpr std::size_t max_source_spread = 65534;

/// Largest IO count per record that the record generator can fill.
inline constexpr std::size_t max_io_per_record = 32;

}  // namespace tgw::infra::sim
