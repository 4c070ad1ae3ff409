#include "infra/sim/fleet_stats.hpp"

#include <cmath>
#include <iterator>

#include <spdlog/fmt/fmt.h>

namespace tgw::infra::sim {
namespace {

std::uint64_t load(const std::atomic<std::uint64_t>& a) noexcept {
  return a.load(std::memory_order_relaxed);
}

// Milliseconds with microsecond precision, so JSON readers get short numbers.
double round_ms(double ms) {
  return std::round(ms * 1000.0) / 1000.0;
}

}  // namespace

fleet_totals fleet_counters::totals() const noexcept {
  fleet_totals t;
  t.connects = load(connects);
  t.connect_failures = load(connect_failures);
  t.disconnects = load(disconnects);
  t.handshakes_accepted = load(handshakes_accepted);
  t.handshakes_rejected = load(handshakes_rejected);
  t.handshake_timeouts = load(handshake_timeouts);
  t.packets_sent = load(packets_sent);
  t.packets_acked = load(packets_acked);
  t.records_sent = load(records_sent);
  t.records_acked = load(records_acked);
  t.resends = load(resends);
  t.ack_timeouts = load(ack_timeouts);
  t.ack_mismatches = load(ack_mismatches);
  t.unexpected_bytes = load(unexpected_bytes);
  t.bad_crc_sent = load(bad_crc_sent);
  t.bad_crc_unacked = load(bad_crc_unacked);
  t.bad_crc_acked = load(bad_crc_acked);
  t.commands_received = load(commands_received);
  t.commands_replied = load(commands_replied);
  t.commands_nacked = load(commands_nacked);
  t.commands_ignored = load(commands_ignored);
  t.commands_invalid = load(commands_invalid);
  t.packets_unacked = load(packets_unacked);
  t.devices_finished = load(devices_finished);
  return t;
}

nlohmann::ordered_json to_json(const fleet_report& r) {
  const fleet_totals& t = r.totals;
  return {
      {"devices", r.devices},
      {"devices_finished", t.devices_finished},
      {"connects", t.connects},
      {"connect_failures", t.connect_failures},
      {"disconnects", t.disconnects},
      {"handshakes_accepted", t.handshakes_accepted},
      {"rejected_handshakes", t.handshakes_rejected},
      {"handshake_timeouts", t.handshake_timeouts},
      {"packets_sent", t.packets_sent},
      {"packets_acked", t.packets_acked},
      {"packets_unacked", t.packets_unacked},
      {"records_sent", t.records_sent},
      {"records_acked", t.records_acked},
      {"resends", t.resends},
      {"timeouts", t.ack_timeouts},
      {"ack_mismatches", t.ack_mismatches},
      {"unexpected_bytes", t.unexpected_bytes},
      {"bad_crc_sent", t.bad_crc_sent},
      {"bad_crc_unacked", t.bad_crc_unacked},
      {"bad_crc_acked", t.bad_crc_acked},
      {"commands_received", t.commands_received},
      {"commands_replied", t.commands_replied},
      {"commands_nacked", t.commands_nacked},
      {"commands_ignored", t.commands_ignored},
      {"commands_invalid", t.commands_invalid},
      {"ack_p50_ms", round_ms(r.ack_p50_ms)},
      {"ack_p99_ms", round_ms(r.ack_p99_ms)},
      {"ack_max_ms", round_ms(r.ack_max_ms)},
      {"elapsed_s", std::round(r.elapsed_s * 1000.0) / 1000.0},
      {"records_per_s", std::round(r.records_per_second() * 10.0) / 10.0},
  };
}

std::string to_text(const fleet_report& r) {
  const fleet_totals& t = r.totals;
  std::string out;
  auto it = std::back_inserter(out);
  fmt::format_to(it, "devices      {} ({} finished)\n", r.devices, t.devices_finished);
  fmt::format_to(it, "connections  {} connects, {} failed, {} disconnects\n", t.connects,
                 t.connect_failures, t.disconnects);
  fmt::format_to(it, "handshakes   {} accepted, {} rejected, {} timed out\n", t.handshakes_accepted,
                 t.handshakes_rejected, t.handshake_timeouts);
  fmt::format_to(it,
                 "packets      {} sent, {} acked, {} unacked at the end, {} resends, {} timeouts, "
                 "{} wrong ACK counts\n",
                 t.packets_sent, t.packets_acked, t.packets_unacked, t.resends, t.ack_timeouts,
                 t.ack_mismatches);
  fmt::format_to(it, "records      {} sent, {} acked, {:.1f}/s over {:.3f} s\n", t.records_sent,
                 t.records_acked, r.records_per_second(), r.elapsed_s);
  fmt::format_to(it, "ACK latency  p50 {:.3f} ms, p99 {:.3f} ms, max {:.3f} ms\n", r.ack_p50_ms,
                 r.ack_p99_ms, r.ack_max_ms);
  fmt::format_to(it, "bad CRC      {} sent, {} rightly unacked, {} acked by the gateway\n",
                 t.bad_crc_sent, t.bad_crc_unacked, t.bad_crc_acked);
  fmt::format_to(it, "commands     {} received, {} replied, {} nACKed, {} ignored, {} invalid\n",
                 t.commands_received, t.commands_replied, t.commands_nacked, t.commands_ignored,
                 t.commands_invalid);
  fmt::format_to(it, "unexpected   {} bytes from the gateway\n", t.unexpected_bytes);
  return out;
}

}  // namespace tgw::infra::sim
