#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "infra/redis/connection.hpp"
#include "infra/redis/key_shards.hpp"

namespace tgw::infra::redis {

/// Where a cluster keeps its shard count. Every gateway, and every reader of the
/// cluster, must split keys the same way; the first gateway stores the count and the
/// others take it from here. Not used on a single node, which has one shard.
inline constexpr const char* key_shards_key = "tgw:telemetry-shards";

/// Shards per master when a gateway starts on a cluster with no count stored and none
/// asked for: several per master, so that a master added later can take whole shards.
inline constexpr std::uint32_t default_shards_per_master = 4;

/// The key shards a gateway writes with. On a single node: the one unprefixed shard,
/// and nothing is written. On a cluster: the stored count; when none is stored,
/// `requested` (0: `default_shards_per_master` per master) is stored first. nullopt
/// with `error` when Redis cannot be read, or `requested` is not 0 and differs from
/// the stored count.
[[nodiscard]] std::optional<key_shards> agree_key_shards(connection& conn, std::uint32_t requested,
                                                         std::string& error);

/// The key shards to read with (registry, telemetry, commands). On a cluster, nullopt
/// with `error` when no count is stored: no gateway has written to it yet; then
/// `*none_stored` (when given) is set, so that a reader can show an empty cluster.
[[nodiscard]] std::optional<key_shards> read_key_shards(connection& conn, std::string& error,
                                                        bool* none_stored = nullptr);

}  // namespace tgw::infra::redis
