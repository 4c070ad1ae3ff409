#include "infra/redis/shard_agreement.hpp"

#include <algorithm>
#include <charconv>

namespace tgw::infra::redis {
namespace {

/// The stored count: 0 when none is stored, nullopt with `error` on failure.
std::optional<std::uint32_t> stored_count(connection& conn, std::string& error) {
  const value v = conn.command({"GET", key_shards_key});
  if (v.is_error()) {
    error = v.text;
    return std::nullopt;
  }
  if (v.is_nil()) return 0;
  std::uint32_t n = 0;
  const char* end = v.text.data() + v.text.size();
  const auto [ptr, ec] = std::from_chars(v.text.data(), end, n);
  if (ec != std::errc{} || ptr != end || n == 0 || n > max_key_shards) {
    error = std::string(key_shards_key) + " holds '" + v.text + "', not a shard count (1-" +
            std::to_string(max_key_shards) + ")";
    return std::nullopt;
  }
  return n;
}

/// Masters serving slots, from CLUSTER INFO's cluster_size.
std::optional<std::uint32_t> master_count(connection& conn, std::string& error) {
  const value v = conn.command({"CLUSTER", "INFO"});
  if (v.is_error()) {
    error = v.text;
    return std::nullopt;
  }
  const std::string field = "cluster_size:";
  const auto at = v.text.find(field);
  std::uint32_t n = 0;
  if (at != std::string::npos) {
    const char* begin = v.text.data() + at + field.size();
    std::from_chars(begin, v.text.data() + v.text.size(), n);
  }
  if (n == 0) {
    error = "CLUSTER INFO names no master serving slots";
    return std::nullopt;
  }
  return n;
}

}  // namespace

std::optional<key_shards> agree_key_shards(connection& conn, std::uint32_t requested,
                                           std::string& error) {
  if (!conn.settings().where.via_cluster()) return key_shards{};
  if (requested > max_key_shards) {
    error = "at most " + std::to_string(max_key_shards) + " shards";
    return std::nullopt;
  }
  auto stored = stored_count(conn, error);
  if (!stored) return std::nullopt;
  if (*stored == 0) {
    std::uint32_t count = requested;
    if (count == 0) {
      const auto masters = master_count(conn, error);
      if (!masters) return std::nullopt;
      count = std::min(max_key_shards, *masters * default_shards_per_master);
    }
    // NX: of two gateways starting at once, the first count stored wins for both.
    const value set = conn.command({"SET", key_shards_key, std::to_string(count), "NX"});
    if (set.is_error()) {
      error = set.text;
      return std::nullopt;
    }
    stored = stored_count(conn, error);
    if (!stored) return std::nullopt;
  }
  if (requested != 0 && requested != *stored) {
    error = "the cluster's keys are split in " + std::to_string(*stored) + " shards (" +
            key_shards_key + "), not " + std::to_string(requested) +
            "; every gateway must use the same count";
    return std::nullopt;
  }
  return key_shards::cluster(*stored);
}

std::optional<key_shards> read_key_shards(connection& conn, std::string& error, bool* none_stored) {
  if (none_stored != nullptr) *none_stored = false;
  if (!conn.settings().where.via_cluster()) return key_shards{};
  const auto stored = stored_count(conn, error);
  if (!stored) return std::nullopt;
  if (*stored == 0) {
    if (none_stored != nullptr) *none_stored = true;
    error = std::string("no shard count stored (") + key_shards_key +
            "): no gateway has written to this cluster yet";
    return std::nullopt;
  }
  return key_shards::cluster(*stored);
}

}  // namespace tgw::infra::redis
