#include "infra/sim/fleet_options.hpp"

#include <charconv>
#include <cmath>

namespace tgw::infra::sim {
namespace {

constexpr std::uint64_t imei_limit = 1'000'000'000'000'000;  // 10^15: 15 digits.

}  // namespace

std::string validate(const fleet_options& o) {
  if (o.count == 0) return "the device count must be at least 1";
  if (o.records_per_packet == 0 || o.records_per_packet > 255)
    return "records per packet must be 1..255";
  if (o.io_per_record > max_io_per_record)
    return "IO elements per record must be 0.." + std::to_string(max_io_per_record);
  if (!codecs::is_avl_codec(static_cast<std::uint8_t>(o.codec)))
    return "the codec must be 8, 8E or 16";
  if (o.target_host.empty() || o.target_port == 0) return "the target needs a host and a port";
  if (o.tls && o.transport != transport_kind::tcp)
    return "--tls needs --transport tcp (devices speak TLS over TCP only)";
  if (!o.tls_ca_file.empty() && !o.tls) return "--tls-ca needs --tls";
  if ((!o.tls_cert_file.empty() || !o.tls_key_file.empty()) && !o.tls)
    return "--tls-cert and --tls-key need --tls";
  if (o.tls_cert_file.empty() != o.tls_key_file.empty())
    return "--tls-cert and --tls-key go together";
  if (o.tls_version != "1.2" && o.tls_version != "1.3") return "--tls-version must be 1.2 or 1.3";
  if (o.ack_timeout.count() <= 0) return "the ACK timeout must be positive";
  if (o.reconnect_delay.count() <= 0 || o.reconnect_max_delay < o.reconnect_delay)
    return "the reconnect delay must be positive and at most the maximum delay";
  if (!(o.bad_crc_share >= 0.0 && o.bad_crc_share <= 1.0)) return "--bad-crc-share must be 0..1";
  if (!(o.ignore_command_share >= 0.0 && o.ignore_command_share <= 1.0))
    return "--ignore-command-share must be 0..1";
  if (o.imei_base < imei_limit / 10 || o.imei_base >= imei_limit ||
      imei_limit - o.imei_base < o.count)
    return "--imei-base plus the device count must stay within 15 digits";
  if (o.source_spread > max_source_spread)
    return "--source-spread must be at most " + std::to_string(max_source_spread);
  if (o.io_threads == 0 || o.io_threads > 64) return "--io-threads must be 1..64";
  return {};
}

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) {
  double number = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  const auto [rest, error] = std::from_chars(begin, end, number);
  if (error != std::errc{} || rest == begin) return std::nullopt;
  const std::string_view unit(rest, static_cast<std::size_t>(end - rest));
  double scale = 0;
  if (unit.empty() || unit == "s")
    scale = 1000;
  else if (unit == "ms")
    scale = 1;
  else if (unit == "m" || unit == "min")
    scale = 60'000;
  else if (unit == "h")
    scale = 3'600'000;
  else
    return std::nullopt;
  const double ms = number * scale;
  // A week is far more than any run; the bound keeps the cast defined.
  if (!std::isfinite(ms) || ms < 0 || ms > 7.0 * 24 * 3'600'000) return std::nullopt;
  return std::chrono::milliseconds{static_cast<std::int64_t>(std::llround(ms))};
}

bool parse_target(std::string_view text, std::string& host, std::uint16_t& port) {
  std::string_view h;
  std::string_view p;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return false;
    h = text.substr(1, close - 1);
    p = text.substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) return false;
    h = text.substr(0, colon);
    p = text.substr(colon + 1);
    if (h.find(':') != std::string_view::npos) return false;  // IPv6 needs brackets.
  }
  unsigned value = 0;
  const auto [rest, error] = std::from_chars(p.data(), p.data() + p.size(), value);
  if (h.empty() || p.empty() || error != std::errc{} || rest != p.data() + p.size() || value == 0 ||
      value > 65535)
    return false;
  host.assign(h);
  port = static_cast<std::uint16_t>(value);
  return true;
}

std::optional<codecs::codec_id> parse_avl_codec(std::string_view text) {
  if (text == "8") return codecs::codec_id::codec8;
  if (text == "8E" || text == "8e") return codecs::codec_id::codec8e;
  if (text == "16") return codecs::codec_id::codec16;
  return std::nullopt;
}

std::chrono::milliseconds next_packet_delay(const fleet_options& options,
                                            std::chrono::steady_clock::time_point first_sent,
                                            std::chrono::steady_clock::time_point acked) {
  if (options.send_period.count() <= 0) return options.send_interval;
  const auto due = first_sent + options.send_period;
  if (due <= acked) return std::chrono::milliseconds{0};
  return std::chrono::ceil<std::chrono::milliseconds>(due - acked);
}

}  // namespace tgw::infra::sim
