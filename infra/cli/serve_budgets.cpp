#include "infra/cli/serve_budgets.hpp"

#include <chrono>

#include <CLI/CLI.hpp>

#include "infra/cli/value_checks.hpp"

namespace tgw::infra {

void add_budget_options(CLI::App* cmd, serve_options::budgets& b) {
  cmd->add_option("--trusted-sources", b.trusted_sources,
                  "CIDR[,CIDR...] exempt from every per-address limit (a monitoring host, an "
                  "own network). None by default, loopback included: a forwarder on the host "
                  "would otherwise bring the whole internet in exempt")
      ->envname("TGW_TRUSTED_SOURCES");
  cmd->add_option("--per-address-sessions", b.per_address_sessions,
                  "Identified device sessions one source address may hold (0: no limit). "
                  "Thousands of trackers can share one carrier-grade NAT address; raise it, or "
                  "trust the address, for a private APN behind one")
      ->envname("TGW_PER_ADDRESS_SESSIONS")
      ->capture_default_str();
  cmd->add_option("--new-devices-per-hour", b.new_devices_per_hour,
                  "Devices unknown to Redis (no device:{imei} yet) one source address may bring "
                  "in per hour; a new device past it is refused 00 and no key is made for it "
                  "(0: no limit; an allowlist admits listed devices without this budget)")
      ->envname("TGW_NEW_DEVICES_PER_HOUR")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd->add_option("--new-devices-burst", b.new_devices_burst,
                  "New devices one address may bring in at once after a quiet spell")
      ->envname("TGW_NEW_DEVICES_BURST")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd->add_option("--max-bad-frames", b.max_bad_frames,
                  "AVL frames that fail to decode (CRC, lengths, codec) before the connection "
                  "is closed (0: no limit); a framing error closes it at once")
      ->envname("TGW_MAX_BAD_FRAMES")
      ->capture_default_str();
  cmd->add_option("--max-write-queue-bytes", b.max_write_queue_bytes,
                  "Bytes queued for a device that does not read them (ACKs, commands) before "
                  "its connection is closed")
      ->envname("TGW_MAX_WRITE_QUEUE_BYTES")
      ->check(CLI::Range(std::size_t{64}, std::size_t{64} << 20))
      ->capture_default_str();
  cmd->add_option("--max-write-queue-writes", b.max_write_queue_writes,
                  "Writes queued for a device that does not read them before its connection is "
                  "closed")
      ->envname("TGW_MAX_WRITE_QUEUE_WRITES")
      ->check(CLI::Range(std::size_t{4}, std::size_t{1} << 20))
      ->capture_default_str();
  cmd->add_option("--tcp-keepalive-s", b.tcp_keepalive_s,
                  "TCP keepalive on device sockets: first probe after this much silence, then "
                  "every tenth of it; 5 unanswered probes close the socket (0: off)")
      ->envname("TGW_TCP_KEEPALIVE_S")
      ->check(CLI::Range(0, 86'400))
      ->capture_default_str();
  cmd->add_option("--tls-step-timeout-ms", b.tls_step_timeout_ms,
                  "Longest wait on the device in one step of a TLS handshake that holds a "
                  "slot; a handshake that waits on its device while another address waits for "
                  "a slot gives its slot up after a tenth of it")
      ->envname("TGW_TLS_STEP_TIMEOUT_MS")
      ->check(CLI::Range(100, 600'000))
      ->capture_default_str();
  cmd->add_option("--udp", b.udp, "UDP on the device port: on (within the --udp-* budgets) or off")
      ->envname("TGW_UDP")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  cmd->add_option("--udp-per-address-rate", b.udp_per_address_rate,
                  "Datagrams per second one source address may send; more are dropped "
                  "unread (0: no limit)")
      ->envname("TGW_UDP_PER_ADDRESS_RATE")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd->add_option("--udp-per-address-burst", b.udp_per_address_burst,
                  "Datagrams one address may send at once after a quiet spell")
      ->envname("TGW_UDP_PER_ADDRESS_BURST")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd->add_option("--udp-backlog", b.udp_backlog,
                  "Datagrams received and not yet processed; more are dropped (0: no limit)")
      ->envname("TGW_UDP_BACKLOG")
      ->capture_default_str();
  cmd->add_option("--udp-max-devices", b.udp_max_devices,
                  "UDP devices present at once; a new one past it is ignored")
      ->envname("TGW_UDP_MAX_DEVICES")
      ->check(positive_number())
      ->capture_default_str();
  cmd->add_option("--udp-new-devices-per-hour", b.udp_new_devices_per_hour,
                  "UDP devices unknown to Redis the instance takes in per hour over every "
                  "source (sources are spoofable); past it no key is made and the datagram "
                  "goes unanswered (0: no limit)")
      ->envname("TGW_UDP_NEW_DEVICES_PER_HOUR")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd->add_option("--udp-new-devices-burst", b.udp_new_devices_burst,
                  "New UDP devices taken in at once after a quiet spell")
      ->envname("TGW_UDP_NEW_DEVICES_BURST")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd->add_flag("--allow-command-control-chars", b.allow_command_control_chars,
                "Deliver command texts that hold control characters (CR, LF, NUL, ESC, ...); "
                "by default they fail as malformed, since a CR or LF would let whoever builds "
                "the text slip a second command in")
      ->envname("TGW_ALLOW_COMMAND_CONTROL_CHARS");
  cmd->add_option("--log-interval-s", b.log_interval_s,
                  "Lines a peer can cause (refusals, bad frames, TLS failures, sessions "
                  "coming and going) are written at most --log-refusal-lines or "
                  "--log-session-lines per cause per this interval; the rest are counted and "
                  "the next line says how many")
      ->envname("TGW_LOG_INTERVAL_S")
      ->check(CLI::Range(1, 86'400))
      ->capture_default_str();
  cmd->add_option("--log-refusal-lines", b.log_refusal_lines,
                  "Lines per cause per --log-interval-s for refusals and bad input")
      ->envname("TGW_LOG_REFUSAL_LINES")
      ->capture_default_str();
  cmd->add_option("--log-session-lines", b.log_session_lines,
                  "Lines per cause per --log-interval-s for devices connecting and leaving")
      ->envname("TGW_LOG_SESSION_LINES")
      ->capture_default_str();
}

bool plan_budgets(const serve_options& o, app::gateway_plan& p, std::string& error) {
  using std::chrono::milliseconds;
  using std::chrono::seconds;
  const serve_options::budgets& b = o.budget;
  if (!b.trusted_sources.empty()) {
    std::string prefix_error;
    auto trusted = net::parse_prefixes(b.trusted_sources, prefix_error);
    if (!trusted) {
      error = "--trusted-sources " + b.trusted_sources + ": " + prefix_error;
      return false;
    }
    p.trusted_sources = std::move(*trusted);
    p.trusted_sources_text = b.trusted_sources;
  }
  p.per_address.sessions = b.per_address_sessions;
  p.per_address.new_devices_per_hour = b.new_devices_per_hour;
  p.per_address.new_devices_burst = b.new_devices_burst;
  p.max_bad_frames = b.max_bad_frames;
  p.limits.max_write_queue_bytes = b.max_write_queue_bytes;
  p.limits.max_write_queue_writes = b.max_write_queue_writes;
  p.limits.tcp_keepalive = seconds{b.tcp_keepalive_s};
  p.tls_gate.limit = o.tls_handshakes;
  p.tls_gate.step_timeout = milliseconds{b.tls_step_timeout_ms};
  p.tls_gate.grace = milliseconds{b.tls_step_timeout_ms / 10};
  p.udp_enabled = b.udp == "on";
  p.udp_per_address.connections_per_second = b.udp_per_address_rate;
  p.udp_per_address.burst = b.udp_per_address_burst;
  p.udp_per_address.ipv6_prefix = p.per_address.ipv6_prefix;
  p.udp_backlog = b.udp_backlog;
  p.udp.max_devices = b.udp_max_devices;
  p.udp.new_devices_per_hour = b.udp_new_devices_per_hour;
  p.udp.new_devices_burst = b.udp_new_devices_burst;
  p.log_budgets.interval = seconds{b.log_interval_s};
  p.log_budgets.refusal_lines = b.log_refusal_lines;
  p.log_budgets.session_lines = b.log_session_lines;
  p.allow_command_control_chars = b.allow_command_control_chars;
  return true;
}

}  // namespace tgw::infra
