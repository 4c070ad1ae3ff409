#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "actors/domain/persist_health.hpp"
#include "infra/app/gateway_plan.hpp"
#include "infra/redis/connection.hpp"
#include "infra/redis/embedded_redis.hpp"
#include "infra/redis/key_shards.hpp"
#include "infra/telemetry/redis_telemetry_store.hpp"

namespace tgw::infra::app {

/// The Redis one gateway instance persists into, and how each of its roles connects.
struct gateway_redis {
  std::string instance;
  /// The value this process writes to the instance's heartbeat (registry::heartbeat_holder).
  std::string holder;
  /// The private redis-server, supervised, when the plan names no Redis.
  std::unique_ptr<redis::embedded_redis> embedded;
  /// Set when the private redis-server could not be kept running: the SIGTERM that
  /// follows ends the gateway with exit code 1 instead of 0.
  std::shared_ptr<std::atomic<bool>> gave_up = std::make_shared<std::atomic<bool>>(false);
  redis::endpoint where;
  /// On a cluster every key of a device lives in its key shard; one unprefixed shard on
  /// a single node.
  redis::key_shards key_shards;

  /// A role's own connection, named tgw-INSTANCE-ROLE.
  [[nodiscard]] redis::connection::options connection(
      const std::string& role,
      std::chrono::milliseconds io_timeout = std::chrono::seconds{5}) const;
  /// The telemetry store of writer shard `shard` (-1: the start-up probe).
  [[nodiscard]] std::shared_ptr<telemetry::redis_telemetry_store> telemetry_store(
      const gateway_plan& plan, int shard) const;
};

/// Starts the private redis-server or takes the plan's; then checks the URL's scheme
/// against the server and agrees the key shards with a cluster. Returns 0, or the exit
/// code after one line that says why.
[[nodiscard]] int open_redis(const gateway_plan& plan, gateway_redis& server);

/// Before the device port opens: the Function library loads, every command is allowed
/// and a canary persists (infra/health/startup_check.hpp), and the replicas of
/// --ack-replicas are counted. A setup that cannot persist is refused here with one line
/// naming the fix, rather than found out by devices that are never ACKed; replicas short
/// start the instance not ready (`health`). Returns 0 or the exit code.
[[nodiscard]] int check_redis(const gateway_plan& plan, const gateway_redis& server,
                              domain::persist_health& health);

/// Takes the instance id's heartbeat before anything is announced, unless another live
/// process holds it (a second gateway with the same --instance-id): then one line names
/// that process and the exit code is 1 (registry::claim_instance_id). Returns 0 or the
/// exit code.
[[nodiscard]] int claim_instance(const gateway_plan& plan, const gateway_redis& server);

/// Leaves the command path at once rather than after the heartbeat's TTL: the
/// heartbeat goes, so publishers see this instance as gone, and what is left in its
/// command stream is re-routed to the devices' new owners or answered instance_lost,
/// each entry once. A heartbeat another process holds (the same instance id) is left
/// to it, and so is the command stream.
void hand_over_commands(const gateway_plan& plan, const gateway_redis& server);

}  // namespace tgw::infra::app
