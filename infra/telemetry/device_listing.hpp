#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "infra/redis/connection.hpp"
#include "infra/redis/key_shards.hpp"
#include "infra/telemetry/projection.hpp"

namespace tgw::infra::telemetry {

/// A device as the registry and its projection show it.
struct listed_device {
  std::string imei;
  std::string owner;         ///< The instance the registry names; empty when not registered.
  bool owner_alive = false;  ///< The owner's heartbeat exists in the device's key shard.
  bool has_projection = false;
  device_projection projection;
};

/// Every device in `connections:registry` (in every key shard on a cluster): the TCP
/// devices connected now, or held by an instance whose death the janitor has not yet
/// cleaned up (owner_alive false). With its projection, sorted by IMEI. nullopt with
/// `error` on a Redis failure. Costs one HSCAN page per 1000 devices and one pipelined
/// round trip per 500 devices.
[[nodiscard]] std::optional<std::vector<listed_device>> list_registered_devices(
    redis::connection& conn, const redis::key_shards& shards, std::string& error);

/// One device, registered or not; has_projection false when it has none either.
[[nodiscard]] std::optional<listed_device> read_listed_device(redis::connection& conn,
                                                              const redis::key_shards& shards,
                                                              const std::string& imei,
                                                              std::string& error);

}  // namespace tgw::infra::telemetry
