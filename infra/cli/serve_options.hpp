#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "infra/app/gateway_plan.hpp"
#include "infra/cli/api_options.hpp"
#include "infra/http/server_limits.hpp"
#include "infra/redis/redis_url.hpp"

namespace tgw::infra {

/// Settings of `tgw serve`, from flags, TGW_* environment variables or the config file.
struct serve_options {
  std::string bind = "0.0.0.0";
  std::uint16_t port = 5027;
  std::string redis_url;         ///< Empty: start a private redis-server in data_dir.
  redis::tls_options redis_tls;  ///< --redis-tls-*, for a rediss URL.
  std::string data_dir = "tgw-data";
  std::string instance_id;  ///< Empty: host-pid-start time.
  std::string metrics_addr = "127.0.0.1:9127";
  /// The metrics endpoint's budgets; its connection caps have flags.
  http::server_limits metrics_limits;
  int io_threads = 0;     ///< 0: half the cores.
  int actor_threads = 0;  ///< 0: half the cores.
  /// CAF's scheduler policy. Sharing by default: on a few cores, stealing's idle
  /// workers spend a measurable share of the CPU polling and sleeping in short naps.
  std::string actor_scheduler = "sharing";
  int writer_shards = 0;        ///< 0: half the cores, at least 2 (1 on a cluster).
  int writer_linger_us = 1000;  ///< How long a writer's batch waits for more writes.
  /// "batch" (SCHED_BATCH, see infra/process/cpu_policy.hpp), "normal" or "keep", for every
  /// thread.
  std::string cpu_policy = "batch";
  std::string crc = "strict";
  std::string allowlist_file;
  /// Read the allowlist from the devices:allowed SET instead of a file.
  bool allowlist_redis = false;
  int allowlist_refresh_s = 30;  ///< How often the Redis allowlist is read again.
  /// TLS on the device port (PEM files); empty: plain TCP.
  std::string tls_cert;
  std::string tls_key;
  std::string tls_client_ca;
  std::string tls_ciphers;  ///< Empty: tls_settings::default_ciphers.
  /// TLS on its own port, --port staying plain; 0: --port itself speaks TLS.
  std::uint16_t tls_port = 0;
  std::string proxy_protocol = "off";
  /// CIDR blocks of the balancers a PROXY header is accepted from.
  std::string proxy_from = "127.0.0.0/8,::1/128";
  /// Per source address (the PROXY header's, if any); 0 turns a limit off. Only
  /// --trusted-sources are exempt.
  double per_address_rate = 100;
  double per_address_burst = 200;
  /// Well below tls_handshakes, so that a few addresses cannot take every slot.
  std::size_t per_address_handshakes = 32;
  int per_address_ipv6_prefix = 64;  ///< IPv6 sources are counted per prefix this long.
  std::size_t tls_handshakes = 256;  ///< TLS handshakes at once over the instance; 0: no bound.
  std::size_t max_frame_size = std::size_t{16} * 1024;
  int first_byte_timeout_ms = 3'000;
  int handshake_timeout_ms = 10'000;
  int idle_timeout_s = 1800;
  int udp_idle_timeout_s = 0;  ///< 0: idle_timeout_s.
  std::size_t max_connections = 100'000;
  std::size_t max_frames_in_flight = 4;
  std::int64_t journal_maxlen = 1000;
  std::int64_t telemetry_maxlen = 0;
  /// "groups": trim the telemetry stream below what every consumer group acknowledged;
  /// "off": never (the groups are still watched for the lag metrics).
  std::string telemetry_retention = "groups";
  int telemetry_retention_interval_ms = 10'000;
  std::int64_t telemetry_ungrouped_maxlen = 1'000'000;
  /// Redis Cluster only: key shards (telemetry streams, and the shards of every
  /// device's keys). 0: the count the cluster has stored, or 4 per master.
  std::uint32_t telemetry_shards = 0;
  int ack_replicas = 0;  ///< 0: ACK on the master's word alone.
  int ack_replicas_timeout_ms = 1000;
  /// How long a write that failed where sending it again is safe (a moved slot, a
  /// master being replaced) is held and retried before its packet goes un-ACKed.
  int persist_retry_ms = 5000;
  int drain_timeout_ms = 5000;
  /// /readyz turns 503 once persisting has failed for every attempt this long.
  int readiness_window_ms = 3000;
  /// A failure that goes on is logged again at most this often, per cause.
  int failure_log_interval_s = 30;
  /// The private redis-server is restarted after it dies at most this many times in
  /// a row (each a backoff later) before the gateway gives up and exits 1.
  int embedded_redis_restarts = 5;
  int heartbeat_interval_ms = 30'000;
  int heartbeat_ttl_s = 90;
  int janitor_interval_ms = 60'000;
  std::string janitor_mode = "reverse-index";
  int command_timeout_ms = 30'000;
  std::size_t command_queue = 16;
  std::size_t command_max_payload = 512;
  std::string capture_dir;  ///< Empty: no recording.
  std::uint64_t capture_max_file_mb = 64;
  std::int64_t capture_max_age_s = 3600;
  std::uint64_t capture_max_total_mb = 1024;
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
    /// Identified sessions per source address: thousands of trackers may share one
    /// carrier-grade NAT address, so the default only stops one address taking all.
    std::size_t per_address_sessions = 10'000;
    /// Devices unknown to Redis that one address may bring in, per hour and at once.
    double new_devices_per_hour = 600;
    double new_devices_burst = 1000;
    std::uint32_t max_bad_frames = 3;
    std::size_t max_write_queue_bytes = std::size_t{64} * 1024;
    std::size_t max_write_queue_writes = 64;
    int tcp_keepalive_s = 60;
    int tls_step_timeout_ms = 5000;
    std::string udp = "on";
    double udp_per_address_rate = 200;
    double udp_per_address_burst = 400;
    std::size_t udp_backlog = 10'000;
    std::size_t udp_max_devices = 100'000;
    double udp_new_devices_per_hour = 600;
    double udp_new_devices_burst = 200;
    int log_interval_s = 10;
    std::uint32_t log_refusal_lines = 5;
    std::uint32_t log_session_lines = 100;
    /// Deliver command texts with control characters (CR, LF, NUL, ESC...).
    bool allow_command_control_chars = false;
  } budget;
};

/// The plan these settings make, checked once: choices become enums, counts and times
/// become numbers and durations, --redis a parsed endpoint, --proxy-from prefixes, and
/// the defaults that depend on the host (instance id, threads) are filled in. Nothing,
/// with the one line that says why, for settings that cannot go together.
[[nodiscard]] std::optional<app::gateway_plan> plan_gateway(const serve_options& o,
                                                            std::string& error);

}  // namespace tgw::infra
