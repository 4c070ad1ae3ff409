#pragma once

#include <chrono>
#include <cstddef>
#include <memory>

#include "actors/domain/persist_health.hpp"

namespace tgw::actors::gateway {

/// Settings of a telemetry writer shard (telemetry_writer.hpp).
struct writer_config {
  std::size_t max_batch = 512;  ///< Writes per Redis round trip at most.
  std::chrono::milliseconds max_backoff{5000};
  /// How long a write that failed where sending it again is safe (its slot moved to a
  /// promoted replica, its master refused the connection; write_outcome::retryable) is
  /// held and sent again before it is answered as failed: below the devices' ACK
  /// timeout, so that a failover costs them latency rather than a resend.
  std::chrono::milliseconds persist_retry{5000};
  /// Between such attempts.
  std::chrono::milliseconds retry_delay{100};
  /// How long a batch that is not full waits for more writes before it goes to Redis
  /// (0: it goes as soon as the writer has read its mailbox).
  std::chrono::microseconds linger{0};
  /// A batch of this many writes goes without lingering. The linger gathers small
  /// batches, whose round trip's fixed cost (a send and a wake-up for each master) is
  /// shared by few writes; a batch this large shares it well already, and under load a
  /// writer that sleeps on it leaves Redis idle (one writer on a cluster, saturated,
  /// lingering on every batch: about a tenth fewer records/s).
  std::size_t linger_below = 64;
  /// Told of every round trip (the writer's index is its shard); it logs failures and
  /// decides readiness. Optional.
  std::shared_ptr<domain::persist_health> health;
};

}  // namespace tgw::actors::gateway
