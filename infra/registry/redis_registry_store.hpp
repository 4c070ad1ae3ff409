#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "actors/ports/registry_store.hpp"
#include "infra/redis/connection.hpp"
#include "infra/redis/function_library.hpp"
#include "infra/redis/key_shards.hpp"

namespace tgw::infra::registry {

using ports::heartbeat_outcome;
using ports::janitor_mode;
using ports::janitor_report;

/// The registry's Redis side: owner-checked atomic steps of the `tgw_registry` function
/// library over one blocking connection. One instance per thread.
///
/// On a Redis Cluster each key shard holds its own registry, reverse indexes,
/// heartbeats and known instances, so every Function call stays in one slot with the
/// same owner checks as on a single node: a device's entry lives in its shard, the
/// heartbeat is written to every shard, and the janitor judges an instance dead shard
/// by shard, against that shard's heartbeat, in the same call that evicts.
class redis_registry_store final : public ports::registry_store {
 public:
  /// `holder` is the heartbeat's value (heartbeat_holder::value()); empty: this process,
  /// renewing every 30 s.
  redis_registry_store(redis::connection::options where, std::string instance_id,
                       redis::key_shards shards = {}, std::string holder = {});

  /// FUNCTION LOAD REPLACE of `tgw_registry` (start-up; a call reloads it if lost).
  bool load_library(std::string& error);

  // The calls are the registry_store's; here each is one `tgw_registry` Function call
  // per key shard it touches (unregister_all: pipelined), and the heartbeat a
  // SET instance:heartbeat:{id} EX ttl in every shard unless another process holds it.
  bool register_device(const std::string& imei, ports::store_failure& error) override;
  bool unregister_device(const std::string& imei, ports::store_failure& error) override;
  std::optional<std::size_t> unregister_all(const std::vector<std::string>& imeis,
                                            ports::store_failure& error) override;
  std::optional<std::size_t> reassert(const std::vector<std::string>& imeis,
                                      ports::store_failure& error) override;
  std::optional<std::vector<std::string>> missing_from_index(const std::vector<std::string>& imeis,
                                                             ports::store_failure& error) override;
  std::optional<heartbeat_outcome> heartbeat(std::chrono::seconds ttl,
                                             ports::store_failure& error) override;
  std::optional<bool> release_heartbeat(ports::store_failure& error) override;
  std::optional<janitor_report> janitor_pass(janitor_mode mode, std::size_t batch,
                                             ports::store_failure& error) override;
  [[nodiscard]] const std::string& instance_id() const override { return instance_; }

 private:
  /// `take`: a fresh handshake, which wins over any owner. `reassert`: a repair, which
  /// leaves an entry held by a live instance.
  enum class claim_mode { take, reassert };
  /// True when the entry now names this instance, false when a live instance kept it
  /// (reassert only), nullopt on failure.
  std::optional<bool> claim(const std::string& imei, claim_mode mode, ports::store_failure& error);
  redis::value call(const std::vector<std::string>& argv);
  std::optional<std::uint64_t> evict_instance(const std::string& prefix, const std::string& dead,
                                              std::size_t batch, ports::store_failure& error);
  bool scan_pass(const std::string& prefix, std::size_t batch, janitor_report& report,
                 ports::store_failure& error);
  bool index_pass(const std::string& prefix, std::size_t batch, janitor_report& report,
                  ports::store_failure& error);

  redis::connection conn_;
  redis::function_library library_;
  std::string instance_;
  redis::key_shards shards_;
  std::string holder_;
  std::unordered_set<std::string> checked_;  ///< Instances a janitor pass looked at.
};

}  // namespace tgw::infra::registry
