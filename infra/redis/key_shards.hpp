#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tgw::infra::redis {

/// How tgw's keys are spread over Redis.
///
/// On a single node there is one shard whose prefix is empty, so every key keeps the
/// name the design fixes (`connections:registry`, `journal:{imei}`, ...) byte for byte.
///
/// On a Redis Cluster there are `count` shards. Each has a hash tag, and a shard's keys
/// are its tag followed by the single-node name (`{3.41}connections:registry`,
/// `{3.41}journal:356307042441013`), so every key of a shard lives in one slot and
/// every Function call that touches one shard's keys is legal on a cluster. A device
/// belongs to one shard, chosen by its IMEI; everything about it (journal, projection,
/// registry entry, offline commands) lives there, beside the shard's telemetry stream.
/// The tags' slots are spread evenly over the 16384 slots, so a cluster that gives each
/// master an equal slot range gives each master an equal share of the shards.
class key_shards {
 public:
  /// One shard, no prefix: the single-node names.
  key_shards();
  /// `count` hash-tagged shards (at least 1).
  [[nodiscard]] static key_shards cluster(std::uint32_t count);

  [[nodiscard]] bool tagged() const noexcept { return tagged_; }
  [[nodiscard]] std::uint32_t count() const noexcept {
    return static_cast<std::uint32_t>(prefixes_.size());
  }
  /// The shard that holds everything about the device `imei`.
  [[nodiscard]] std::uint32_t shard_of(std::string_view imei) const noexcept;
  /// What goes before a single-node key name in `shard`: empty, or "{tag}".
  [[nodiscard]] const std::string& prefix(std::uint32_t shard) const { return prefixes_[shard]; }
  [[nodiscard]] const std::string& prefix_of(std::string_view imei) const {
    return prefixes_[shard_of(imei)];
  }

 private:
  bool tagged_ = false;
  std::vector<std::string> prefixes_;
};

/// The largest `--key-shards` accepted: more shards than this only add per-shard
/// work (heartbeats, stream reads) without spreading the load any further.
inline constexpr std::uint32_t max_key_shards = 1024;

}  // namespace tgw::infra::redis
