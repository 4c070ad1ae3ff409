#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "infra/redis/connection.hpp"
#include "infra/redis/function_library.hpp"
#include "infra/redis/key_shards.hpp"

namespace tgw::infra::registry {

/// Key names fixed by the design (other systems read them). `prefix` is the key
/// shard's hash tag on a Redis Cluster and empty on a single node (redis::key_shards):
/// a cluster holds one registry, reverse index and heartbeat per shard.
namespace keys {
inline constexpr const char* registry = "connections:registry";
inline constexpr const char* known_instances = "instances:known";
inline std::string heartbeat(const std::string& id, std::string_view prefix = {}) {
  return std::string(prefix).append("instance:heartbeat:").append(id);
}
inline std::string devices(const std::string& id, std::string_view prefix = {}) {
  return std::string(prefix).append("instance:devices:").append(id);
}
inline std::string registry_in(std::string_view prefix) {
  return std::string(prefix).append(registry);
}
inline std::string known_instances_in(std::string_view prefix) {
  return std::string(prefix).append(known_instances);
}
}  // namespace keys

/// How the janitor finds a dead instance's entries.
enum class janitor_mode : std::uint8_t {
  reverse_index,  ///< SSCAN instance:devices:{dead}: cost follows the dead instance's size.
  scan,           ///< HSCAN the whole registry and EXISTS each owner's heartbeat.
};

/// What one janitor pass did.
struct janitor_report {
  std::size_t instances_checked = 0;
  std::vector<std::string> dead;
  std::uint64_t evicted = 0;  ///< Entries this pass actually deleted.
};

/// The registry's Redis side: owner-checked atomic steps of the `tgw_registry` function
/// library over one blocking connection. One instance per thread.
///
/// On a Redis Cluster each key shard holds its own registry, reverse indexes,
/// heartbeats and known instances, so every Function call stays in one slot with the
/// same owner checks as on a single node: a device's entry lives in its shard, the
/// heartbeat is written to every shard, and the janitor judges an instance dead shard
/// by shard, against that shard's heartbeat, in the same call that evicts.
class registry_store {
 public:
  registry_store(redis::connection::options where, std::string instance_id,
                 redis::key_shards shards = {});

  bool load_library(std::string& error);
  /// Registers `imei` to this instance; the previous owner's reverse index loses it in
  /// the same step. False with `error` when Redis fails.
  bool register_device(const std::string& imei, std::string& error);
  /// Deletes the entry only if it still names this instance.
  bool unregister_device(const std::string& imei, std::string& error);
  /// The same for many devices, pipelined. Returns how many entries were deleted.
  std::optional<std::size_t> unregister_all(const std::vector<std::string>& imeis,
                                            std::string& error);
  /// Puts back the entries of devices this instance holds, after an outage or after
  /// its heartbeat lapsed (the repair). Unlike register_device it never takes an
  /// entry from a live instance: the device reconnected there, and this instance's
  /// session of it is stale. Returns how many were left to live instances.
  std::optional<std::size_t> reassert(const std::vector<std::string>& imeis, std::string& error);
  /// The devices of `imeis` that this instance's reverse index lacks. A device's entry
  /// leaves the index when another instance takes it; when that registration was stale
  /// (its session already closing there), its unregister then deletes the entry, and
  /// only this check finds the device that is still connected here.
  std::optional<std::vector<std::string>> missing_from_index(const std::vector<std::string>& imeis,
                                                             std::string& error);
  /// SET instance:heartbeat:{id} EX ttl (in every shard). Returns true when the key
  /// had been missing in any shard (this instance was presumed dead there), nullopt on
  /// failure.
  std::optional<bool> heartbeat(std::chrono::seconds ttl, std::string& error);
  /// One janitor pass over every known instance whose heartbeat is gone.
  std::optional<janitor_report> janitor_pass(janitor_mode mode, std::size_t batch,
                                             std::string& error);

  [[nodiscard]] const std::string& instance_id() const { return instance_; }

 private:
  /// `take`: a fresh handshake, which wins over any owner. `reassert`: a repair, which
  /// leaves an entry held by a live instance.
  enum class claim_mode { take, reassert };
  /// True when the entry now names this instance, false when a live instance kept it
  /// (reassert only), nullopt on failure.
  std::optional<bool> claim(const std::string& imei, claim_mode mode, std::string& error);
  redis::value call(const std::vector<std::string>& argv);
  std::optional<std::uint64_t> evict_instance(const std::string& prefix, const std::string& dead,
                                              std::size_t batch, std::string& error);
  bool scan_pass(const std::string& prefix, std::size_t batch, janitor_report& report,
                 std::string& error);
  bool index_pass(const std::string& prefix, std::size_t batch, janitor_report& report,
                  std::string& error);

  redis::connection conn_;
  redis::function_library library_;
  std::string instance_;
  redis::key_shards shards_;
  std::unordered_set<std::string> checked_;  ///< Instances a janitor pass looked at.
};

}  // namespace tgw::infra::registry
