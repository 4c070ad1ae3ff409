#include "infra/redis/key_shards.hpp"

#include <algorithm>

#include "infra/redis/key_slot.hpp"

namespace tgw::infra::redis {
namespace {

/// FNV-1a, 64 bits: spreads IMEIs (which share long prefixes) evenly over shards.
std::uint64_t fnv1a(std::string_view bytes) noexcept {
  std::uint64_t h = 14695981039346656037ULL;
  for (const char c : bytes) {
    h ^= static_cast<std::uint8_t>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

/// The first tag "shard.n" whose slot lies in the shard's equal part of the slot range.
/// Deterministic, so every process that knows the shard count names the same keys.
std::string tag_for(std::uint32_t shard, std::uint32_t count) {
  const std::uint64_t low = std::uint64_t{cluster_slots} * shard / count;
  const std::uint64_t high = std::uint64_t{cluster_slots} * (shard + 1) / count;
  for (std::uint32_t n = 0;; ++n) {
    std::string tag = std::to_string(shard) + '.' + std::to_string(n);
    const std::uint16_t slot = crc16_xmodem(tag) % cluster_slots;
    if (slot >= low && slot < high) return '{' + tag + '}';
  }
}

}  // namespace

key_shards::key_shards() : prefixes_(1) {}

key_shards key_shards::cluster(std::uint32_t count) {
  key_shards out;
  out.tagged_ = true;
  out.prefixes_.clear();
  count = std::clamp<std::uint32_t>(count, 1, max_key_shards);
  out.prefixes_.reserve(count);
  for (std::uint32_t s = 0; s < count; ++s) out.prefixes_.push_back(tag_for(s, count));
  return out;
}

std::uint32_t key_shards::shard_of(std::string_view imei) const noexcept {
  if (prefixes_.size() == 1) return 0;
  return static_cast<std::uint32_t>(fnv1a(imei) % prefixes_.size());
}

}  // namespace tgw::infra::redis
