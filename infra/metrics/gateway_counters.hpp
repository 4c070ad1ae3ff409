#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "infra/metrics/atomic_histogram.hpp"
#include "infra/metrics/command_outcomes.hpp"
#include "infra/metrics/refusals.hpp"
#include "infra/metrics/sharded_counter.hpp"

namespace tgw::infra::metrics {

/// Counters the sessions of one instance share; the metrics endpoint reads them. The data
/// path only increments, and nothing here depends on CAF or prometheus-cpp. Those every
/// packet touches are sharded by thread (sharded_counter), so that threads on different
/// cores do not take one cache line from each other on every packet; the rest are
/// plain atomics.
struct gateway_counters {
  std::atomic<std::uint64_t> handshakes_accepted{0};
  std::atomic<std::uint64_t> handshakes_rejected{0};
  sharded_counter<std::uint64_t> frames_avl;
  std::atomic<std::uint64_t> frames_rejected{0};
  std::atomic<std::uint64_t> frames_command{0};
  std::atomic<std::uint64_t> keepalives{0};
  sharded_counter<std::uint64_t> records_persisted;
  std::atomic<std::uint64_t> packets_duplicate{0};
  std::atomic<std::uint64_t> persist_failures{0};  ///< Redis down or refusing the write.
  /// Stored, but fewer replicas confirmed it than --ack-replicas asks.
  std::atomic<std::uint64_t> persist_failures_replicas{0};
  sharded_counter<std::uint64_t> acks_sent;
  std::atomic<std::int64_t> sessions_open{0};
  sharded_counter<std::int64_t> persist_in_flight;
  std::atomic<std::uint64_t> registry_failures{0};
  std::atomic<std::uint64_t> janitor_evicted{0};
  std::atomic<std::uint64_t> janitor_passes{0};
  std::atomic<std::int64_t> registry_held{0};
  /// Devices disconnected because a reloaded allowlist no longer admits them.
  std::atomic<std::uint64_t> allowlist_disconnects{0};
  /// IMEIs in the allowlist in force; 0 when every device is admitted.
  std::atomic<std::int64_t> allowlist_size{0};
  /// Allowlist reloads (SIGHUP or the Redis refresh) that failed; the old list stayed.
  std::atomic<std::uint64_t> allowlist_reload_failures{0};

  // Readiness (/readyz): the device port accepts, the last heartbeat write succeeded
  // (and when, in ms since the epoch), and how many telemetry writers find Redis down.
  std::atomic<bool> listening{false};
  std::atomic<bool> heartbeat_ok{false};
  /// Another process with this instance id holds the heartbeat (registry actor).
  std::atomic<bool> heartbeat_taken{false};
  std::atomic<std::int64_t> heartbeat_at_ms{0};
  std::atomic<int> writers_down{0};

  /// Frames by codec id byte (08, 8E, 10, 0C..0F), AVL and command alike.
  sharded_counter_array<std::uint64_t, 256> frames_by_codec;
  /// AVL frames refused by the decoder, by codecs::errc value.
  std::array<std::atomic<std::uint64_t>, 32> frames_rejected_by_error{};

  /// Seconds from the session receiving an AVL frame to its ACK going to the socket:
  /// the writer's queue plus the Redis round trip.
  atomic_histogram<12> ack_latency{
      {0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0}};
  /// Writes (packets and events) per telemetry writer round trip.
  atomic_histogram<10> writer_batch_size{{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}};
  /// Telemetry writer round trips that failed because Redis was unreachable or refused.
  std::atomic<std::uint64_t> writer_redis_errors{0};
  /// Times a telemetry writer found Redis reachable again after an outage.
  std::atomic<std::uint64_t> writer_reconnects{0};

  /// Outbound commands read from this instance's stream.
  std::atomic<std::uint64_t> commands_received{0};
  /// Commands answered by the reader without reaching a device (malformed, expired,
  /// device not here).
  std::atomic<std::uint64_t> commands_refused{0};
  /// Commands resolved by a session (responded, failed, timeout, ...) and published.
  std::atomic<std::uint64_t> commands_resolved{0};
  /// Commands written to a device socket.
  std::atomic<std::uint64_t> commands_written{0};
  /// Entries of dead instances' command streams this janitor gave an outcome.
  std::atomic<std::uint64_t> commands_adopted{0};
  /// Response publications Redis refused (retried).
  std::atomic<std::uint64_t> command_redis_errors{0};
  /// Commands answered by this instance, by command_outcome_names.
  std::array<std::atomic<std::uint64_t>, command_outcome_names.size()> command_outcomes{};

  /// What peers were refused, by the budget they spent (listeners, sessions, UDP).
  refusal_counters refusals;

  /// Device and gateway payload bytes written to capture files (--capture-dir).
  std::atomic<std::uint64_t> capture_bytes_written{0};
  /// Payload bytes not captured: the capture queue was full or a file write failed.
  std::atomic<std::uint64_t> capture_dropped{0};
};

}  // namespace tgw::infra::metrics
