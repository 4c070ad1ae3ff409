#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "actors/commands/command_config.hpp"
#include "actors/gateway/retention_status.hpp"
#include "actors/gateway/udp_config.hpp"
#include "actors/gateway/writer_config.hpp"
#include "actors/registry/registry_config.hpp"
#include "codecs/codec_id.hpp"
#include "infra/api/api_server.hpp"
#include "infra/capture/capture_files.hpp"
#include "infra/http/server_limits.hpp"
#include "infra/log/log_budget.hpp"
#include "infra/net/address_limits.hpp"
#include "infra/net/connection_limits.hpp"
#include "infra/net/handshake_gate.hpp"
#include "infra/net/ip_prefix.hpp"
#include "infra/net/proxy_header.hpp"
#include "infra/net/tls_context.hpp"
#include "infra/process/cpu_policy.hpp"
#include "infra/redis/connection.hpp"

namespace tgw::infra::app {

/// CAF's scheduler policy (`--actor-scheduler`).
enum class actor_scheduler : std::uint8_t { sharing, stealing };

/// Everything `tgw serve` is to do, as the command line validated it: enums, durations
/// and parsed addresses, nothing left to parse. The settings of each actor are its own
/// (defined next to it); the rest is the wiring's (infra/app/run_gateway.hpp). A plan
/// made with no settings holds the gateway's defaults: `tgw serve`'s flags start from
/// them (infra/cli/serve_options.hpp), so they are written here and nowhere else.
struct gateway_plan {
  std::string instance_id;  ///< Never empty: host-pid-start time unless one was given.

  // --- device ports ---------------------------------------------------------------
  std::string bind = "0.0.0.0";
  std::uint16_t port = 5027;             ///< TCP and UDP; 0: any free port.
  std::uint16_t tls_port = 0;            ///< TLS on a port of its own; 0: `port` speaks TLS.
  std::optional<net::tls_settings> tls;  ///< Nothing: plain TCP.
  /// TLS handshakes at once over the instance (0: no bound), and the longest wait on
  /// a device in one step of a handshake that holds a slot.
  net::handshake_gate::settings tls_gate;
  net::proxy_mode proxy = net::proxy_mode::off;
  std::vector<net::ip_prefix> proxy_from = net::loopback_prefixes();
  std::string proxy_from_text = "127.0.0.0/8,::1/128";  ///< As given, for the start-up line.
  net::address_limit_settings per_address{.connections_per_second = 100,
                                          .burst = 200,
                                          // Well below tls_gate's limit, so that a few
                                          // addresses cannot take every slot.
                                          .handshakes = 32,
                                          // Thousands of trackers may share one
                                          // carrier-grade NAT address: this only stops
                                          // one address taking all.
                                          .sessions = 10'000,
                                          .new_devices_per_hour = 600,
                                          .new_devices_burst = 1000};
  /// Sources exempt from the per-address limits; none unless named.
  std::vector<net::ip_prefix> trusted_sources;
  std::string trusted_sources_text;  ///< As given, for the start-up line.
  net::connection_limits limits;
  /// AVL frames that fail to decode before a connection is closed; 0: no limit.
  std::uint32_t max_bad_frames = 3;
  /// UDP on the device port, and what it lets a source spend.
  bool udp_enabled = true;
  net::address_limit_settings udp_per_address{.connections_per_second = 200, .burst = 400};
  std::size_t udp_backlog = 10'000;
  actors::gateway::udp_config udp;
  /// Lines a peer can cause, per cause and interval.
  infra::log_budget_settings log_budgets;

  // --- who may connect -----------------------------------------------------------
  std::string allowlist_file;    ///< Empty: no file.
  bool allowlist_redis = false;  ///< The devices:allowed SET instead of a file.
  std::chrono::seconds allowlist_refresh{30};

  // --- Redis ----------------------------------------------------------------------
  std::optional<redis::endpoint> redis;  ///< Nothing: a private redis-server in data_dir.
  std::string data_dir = "tgw-data";
  int embedded_redis_restarts = 5;
  std::uint32_t telemetry_shards = 0;  ///< Redis Cluster only; 0: what the cluster stored.

  // --- threads --------------------------------------------------------------------
  int io_threads = 1;
  int actor_threads = 1;
  int writer_shards = 2;
  actor_scheduler scheduler = actor_scheduler::sharing;
  process::cpu_policy cpu = process::cpu_policy::batch;

  // --- persisting and readiness ---------------------------------------------------
  codecs::crc_policy crc = codecs::crc_policy::strict;
  std::int64_t journal_maxlen = 1000;
  std::int64_t telemetry_maxlen = 0;
  int ack_replicas = 0;  ///< 0: ACK on the master's word alone.
  std::chrono::milliseconds ack_replicas_timeout{1000};
  /// Its `health` is the instance's, set at start.
  actors::gateway::writer_config writer = [] {
    actors::gateway::writer_config gateway;
    gateway.linger = std::chrono::microseconds{1000};
    return gateway;
  }();
  /// /readyz turns 503 once persisting has failed for every attempt this long.
  std::chrono::milliseconds readiness_window{3000};
  /// A failure that goes on is logged again at most this often, per cause.
  std::chrono::seconds failure_log_interval{30};

  // --- actors beside the sessions --------------------------------------------------
  actors::registry::registry_config registry;
  actors::registry::janitor_config janitor;
  actors::commands::reader_config command_reader;
  actors::commands::responder_config command_responder;
  /// Its `streams` are the key shards' telemetry streams, set at start.
  actors::gateway::retention_config retention;
  std::size_t command_queue = 16;  ///< Per device, queued or in flight.
  std::chrono::milliseconds command_timeout{30'000};
  std::size_t command_max_payload = 512;
  /// Command texts with control characters are delivered rather than failed malformed.
  bool allow_command_control_chars = false;

  // --- around the instance ---------------------------------------------------------
  std::optional<capture::rotation_policy> capture;  ///< Nothing: no recording.
  std::string metrics_addr = "127.0.0.1:9127";      ///< Empty: no endpoint.
  /// The application API in this process too (tgw serve --api-addr); none when unset.
  std::optional<api::api_server_settings> api;
  http::server_limits metrics_limits;  ///< What one client may make it spend.
  /// On SIGTERM, time to finish persisting and ACKing what is in flight.
  std::chrono::milliseconds drain_timeout{5000};
};

}  // namespace tgw::infra::app
