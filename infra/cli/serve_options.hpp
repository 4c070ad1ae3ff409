#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "infra/app/gateway_plan.hpp"
#include "infra/capture/capture_files.hpp"
#include "infra/cli/api_options.hpp"
#include "infra/http/server_limits.hpp"
#include "infra/redis/redis_url.hpp"

namespace tgw::infra {

/// The gateway's defaults, written once: in the plan (infra/app/gateway_plan.hpp) and
/// the settings of the actors and limits it holds. A setting below starts from the
/// plan's value, so the two cannot drift apart; only choices (text the plan holds as an
/// enum) and what the host decides (0: from the cores) are written here.
/// tests/infra/cli/serve_plan_test.cpp holds the plan of the default settings equal to
/// the default plan.
[[nodiscard]] const app::gateway_plan& gateway_defaults();

/// A plan's duration as the whole microseconds, milliseconds or seconds a flag takes.
[[nodiscard]] constexpr int in_us(std::chrono::nanoseconds d) {
  return static_cast<int>(std::chrono::duration_cast<std::chrono::microseconds>(d).count());
}
[[nodiscard]] constexpr int in_ms(std::chrono::nanoseconds d) {
  return static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
}
[[nodiscard]] constexpr int in_s(std::chrono::nanoseconds d) {
  return static_cast<int>(std::chrono::duration_cast<std::chrono::seconds>(d).count());
}

/// Settings of `tgw serve`, from flags, TGW_* environment variables or the config file.
struct serve_options {
  std::string bind = gateway_defaults().bind;
  std::uint16_t port = gateway_defaults().port;
  std::string redis_url;         ///< Empty: start a private redis-server in data_dir.
  redis::tls_options redis_tls;  ///< --redis-tls-*, for a rediss URL.
  std::string data_dir = gateway_defaults().data_dir;
  std::string instance_id;  ///< Empty: host-pid-start time.
  std::string metrics_addr = gateway_defaults().metrics_addr;
  /// The metrics endpoint's budgets; its connection caps have flags.
  http::server_limits metrics_limits;
  int io_threads = 0;     ///< 0: half the cores.
  int actor_threads = 0;  ///< 0: half the cores.
  /// CAF's scheduler policy. Sharing by default: on a few cores, stealing's idle
  /// workers spend a measurable share of the CPU polling and sleeping in short naps.
  std::string actor_scheduler = "sharing";
  int writer_shards = 0;  ///< 0: half the cores, at least 2 (1 on a cluster).
  /// How long a writer's batch waits for more writes.
  int writer_linger_us = in_us(gateway_defaults().writer.linger);
  /// "batch" (SCHED_BATCH, see infra/process/cpu_policy.hpp), "normal" or "keep", for every
  /// thread.
  std::string cpu_policy = "batch";
  std::string crc = "strict";
  std::string allowlist_file;
  /// Read the allowlist from the devices:allowed SET instead of a file.
  bool allowlist_redis = gateway_defaults().allowlist_redis;
  /// How often the Redis allowlist is read again.
  int allowlist_refresh_s = in_s(gateway_defaults().allowlist_refresh);
  /// TLS on the device port (PEM files); empty: plain TCP.
  std::string tls_cert;
  std::string tls_key;
  std::string tls_client_ca;
  std::string tls_ciphers;  ///< Empty: tls_settings::default_ciphers.
  /// TLS on its own port, --port staying plain; 0: --port itself speaks TLS.
  std::uint16_t tls_port = gateway_defaults().tls_port;
  std::string proxy_protocol = "off";
  /// CIDR blocks of the balancers a PROXY header is accepted from.
  std::string proxy_from = gateway_defaults().proxy_from_text;
  /// Per source address (the PROXY header's, if any); 0 turns a limit off. Only
  /// --trusted-sources are exempt.
  double per_address_rate = gateway_defaults().per_address.connections_per_second;
  double per_address_burst = gateway_defaults().per_address.burst;
  std::size_t per_address_handshakes = gateway_defaults().per_address.handshakes;
  /// IPv6 sources are counted per prefix this long.
  int per_address_ipv6_prefix = static_cast<int>(gateway_defaults().per_address.ipv6_prefix);
  /// TLS handshakes at once over the instance; 0: no bound.
  std::size_t tls_handshakes = gateway_defaults().tls_gate.limit;
  std::size_t max_frame_size = gateway_defaults().limits.max_frame_size;
  int first_byte_timeout_ms = in_ms(gateway_defaults().limits.first_byte_timeout);
  int handshake_timeout_ms = in_ms(gateway_defaults().limits.handshake_timeout);
  int idle_timeout_s = in_s(gateway_defaults().limits.idle_timeout);
  int udp_idle_timeout_s = 0;  ///< 0: idle_timeout_s.
  std::size_t max_connections = gateway_defaults().limits.max_connections;
  std::size_t max_frames_in_flight = gateway_defaults().limits.max_frames_in_flight;
  std::int64_t journal_maxlen = gateway_defaults().journal_maxlen;
  std::int64_t telemetry_maxlen = gateway_defaults().telemetry_maxlen;
  /// "groups": trim the telemetry stream below what every consumer group acknowledged;
  /// "off": never (the groups are still watched for the lag metrics).
  std::string telemetry_retention = "groups";
  int telemetry_retention_interval_ms = in_ms(gateway_defaults().retention.interval);
  std::int64_t telemetry_ungrouped_maxlen = gateway_defaults().retention.ungrouped.maxlen;
  /// Redis Cluster only: key shards (telemetry streams, and the shards of every
  /// device's keys). 0: the count the cluster has stored, or 4 per master.
  std::uint32_t telemetry_shards = gateway_defaults().telemetry_shards;
  int ack_replicas = gateway_defaults().ack_replicas;  ///< 0: ACK on the master's word alone.
  int ack_replicas_timeout_ms = in_ms(gateway_defaults().ack_replicas_timeout);
  /// How long a write that failed where sending it again is safe (a moved slot, a
  /// master being replaced) is held and retried before its packet goes un-ACKed.
  int persist_retry_ms = in_ms(gateway_defaults().writer.persist_retry);
  int drain_timeout_ms = in_ms(gateway_defaults().drain_timeout);
  /// /readyz turns 503 once persisting has failed for every attempt this long.
  int readiness_window_ms = in_ms(gateway_defaults().readiness_window);
  /// A failure that goes on is logged again at most this often, per cause.
  int failure_log_interval_s = in_s(gateway_defaults().failure_log_interval);
  /// The private redis-server is restarted after it dies at most this many times in
  /// a row (each a backoff later) before the gateway gives up and exits 1.
  int embedded_redis_restarts = gateway_defaults().embedded_redis_restarts;
  int heartbeat_interval_ms = in_ms(gateway_defaults().registry.heartbeat_interval);
  int heartbeat_ttl_s = in_s(gateway_defaults().registry.heartbeat_ttl);
  int janitor_interval_ms = in_ms(gateway_defaults().janitor.interval);
  std::string janitor_mode = "reverse-index";
  int command_timeout_ms = in_ms(gateway_defaults().command_timeout);
  std::size_t command_queue = gateway_defaults().command_queue;
  std::size_t command_max_payload = gateway_defaults().command_max_payload;
  std::string capture_dir;  ///< Empty: no recording.
  std::uint64_t capture_max_file_mb = capture::rotation_policy{}.max_file_bytes >> 20;
  std::int64_t capture_max_age_s = capture::rotation_policy{}.max_age.count();
  std::uint64_t capture_max_total_mb = capture::rotation_policy{}.max_total_bytes >> 20;
  std::string log_level = "info";
  std::string log_format = "text";
  /// The application API in this process too (--api-addr); off unless asked for, so
  /// its listen address starts empty here, not at tgw api's default.
  api::api_server_settings api = [] {
    api::api_server_settings off;
    off.listen.clear();
    return off;
  }();
  api_flag_values api_flags;

  /// What one peer may make the instance spend (docs/OPERATIONS.md, "Hostile input").
  struct budgets {
    std::string trusted_sources;  ///< CIDR list exempt from the per-address limits.
    /// Identified sessions per source address.
    std::size_t per_address_sessions = gateway_defaults().per_address.sessions;
    /// Devices unknown to Redis that one address may bring in, per hour and at once.
    double new_devices_per_hour = gateway_defaults().per_address.new_devices_per_hour;
    double new_devices_burst = gateway_defaults().per_address.new_devices_burst;
    std::uint32_t max_bad_frames = gateway_defaults().max_bad_frames;
    std::size_t max_write_queue_bytes = gateway_defaults().limits.max_write_queue_bytes;
    std::size_t max_write_queue_writes = gateway_defaults().limits.max_write_queue_writes;
    int tcp_keepalive_s = in_s(gateway_defaults().limits.tcp_keepalive);
    int tls_step_timeout_ms = in_ms(gateway_defaults().tls_gate.step_timeout);
    std::string udp = "on";
    double udp_per_address_rate = gateway_defaults().udp_per_address.connections_per_second;
    double udp_per_address_burst = gateway_defaults().udp_per_address.burst;
    std::size_t udp_backlog = gateway_defaults().udp_backlog;
    std::size_t udp_max_devices = gateway_defaults().udp.max_devices;
    double udp_new_devices_per_hour = gateway_defaults().udp.new_devices_per_hour;
    double udp_new_devices_burst = gateway_defaults().udp.new_devices_burst;
    int log_interval_s = in_s(gateway_defaults().log_budgets.interval);
    std::uint32_t log_refusal_lines = gateway_defaults().log_budgets.refusal_lines;
    std::uint32_t log_session_lines = gateway_defaults().log_budgets.session_lines;
    /// Deliver command texts with control characters (CR, LF, NUL, ESC...).
    bool allow_command_control_chars = gateway_defaults().allow_command_control_chars;
  } budget;
};

/// The plan these settings make, checked once: choices become enums, counts and times
/// become numbers and durations, --redis a parsed endpoint, --proxy-from prefixes, and
/// the defaults that depend on the host (instance id, threads) are filled in. Nothing,
/// with the one line that says why, for settings that cannot go together.
[[nodiscard]] std::optional<app::gateway_plan> plan_gateway(const serve_options& o,
                                                            std::string& error);

}  // namespace tgw::infra
