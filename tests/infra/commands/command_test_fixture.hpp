#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "infra/commands/command_publisher.hpp"
#include "infra/commands/redis_command_store.hpp"
#include "infra/registry/registry_keys.hpp"
#include "tests/support/redis_backend.hpp"

namespace tgw::infra::commands::test {

using namespace std::chrono_literals;

/// A real Redis with helpers to place devices on instances and read back what the
/// command functions wrote. Runs on a single node (infra_test) and on a 3+3 cluster
/// (cluster_test, see redis_backend): the helpers name the keys of the shard a device
/// is in.
class CommandFixture : public ::testing::Test {
 protected:
  redis::connection::options where() const {
    // io timeout above the BLOCK times the tests use.
    return {backend.endpoint(), 1000ms, 3000ms, "test"};
  }
  const redis::key_shards& shards() const { return backend.shards(); }
  const std::string& prefix(const std::string& imei) const { return shards().prefix_of(imei); }
  redis_command_store store(const std::string& instance) {
    return redis_command_store(where(), instance, 512, shards());
  }
  command_publisher publisher() { return command_publisher(where(), 200ms, shards()); }

  /// `imei` is held by `instance`; with `alive` the instance has a heartbeat and a
  /// consumer group on its streams, as a running gateway does.
  void place(const std::string& imei, const std::string& instance, bool alive = true) {
    redis.command({"HSET", registry::keys::registry_in(prefix(imei)), imei, instance});
    if (!alive) return;
    for (std::uint32_t s = 0; s < shards().count(); ++s)
      redis.command(
          {"SET", registry::keys::heartbeat(instance, shards().prefix(s)), "1", "EX", "90"});
    create_groups(instance);
  }
  void create_groups(const std::string& instance) {
    for (std::uint32_t s = 0; s < shards().count(); ++s)
      redis.command({"XGROUP", "CREATE", keys::outbound(instance, shards().prefix(s)), "ingest",
                     "0", "MKSTREAM"});
  }

  /// The keys of `imei`'s shard.
  std::string outbound(const std::string& instance, const std::string& imei) const {
    return keys::outbound(instance, prefix(imei));
  }
  std::string journal(const std::string& imei) const { return prefix(imei) + "journal:" + imei; }
  std::string offline(const std::string& imei) const { return keys::offline(imei, prefix(imei)); }
  std::string responses_of(const std::string& imei) const {
    return keys::responses_in(prefix(imei));
  }

  /// Every entry of a stream as field maps, oldest first.
  std::vector<std::map<std::string, std::string>> entries(const std::string& key) {
    std::vector<std::map<std::string, std::string>> out;
    const redis::value v = redis.command({"XRANGE", key, "-", "+"});
    for (const redis::value& e : v.elements) {
      std::map<std::string, std::string> m;
      const auto& f = e.elements[1].elements;
      for (std::size_t i = 0; i + 1 < f.size(); i += 2) m[f[i].text] = f[i + 1].text;
      out.push_back(std::move(m));
    }
    return out;
  }
  /// Every response, shard after shard.
  std::vector<std::map<std::string, std::string>> responses() {
    std::vector<std::map<std::string, std::string>> out;
    for (std::uint32_t s = 0; s < shards().count(); ++s)
      for (auto& r : entries(keys::responses_in(shards().prefix(s)))) out.push_back(std::move(r));
    return out;
  }
  std::int64_t xlen(const std::string& key) { return redis.command({"XLEN", key}).integer; }
  bool exists(const std::string& key) { return redis.command({"EXISTS", key}).integer == 1; }
  /// Whether the instance has an outbound stream in any shard.
  bool has_streams(const std::string& instance) {
    for (std::uint32_t s = 0; s < shards().count(); ++s)
      if (exists(keys::outbound(instance, shards().prefix(s)))) return true;
    return false;
  }
  void delete_streams(const std::string& instance) {
    for (std::uint32_t s = 0; s < shards().count(); ++s)
      redis.command({"DEL", keys::outbound(instance, shards().prefix(s))});
  }
  /// Entries delivered to the instance and not acknowledged, over every shard.
  std::int64_t pending(const std::string& instance) {
    std::int64_t n = 0;
    for (std::uint32_t s = 0; s < shards().count(); ++s) {
      const redis::value v =
          redis.command({"XPENDING", keys::outbound(instance, shards().prefix(s)), "ingest"});
      if (!v.is_array() || v.elements.empty()) return -1;
      n += v.elements[0].integer;
    }
    return n;
  }
  /// Appends a raw entry (field, value, ...) to an instance's stream in the shard of
  /// `in_shard_of`, or else of its target_imei.
  std::string add_raw(const std::string& instance, const std::vector<std::string>& fields,
                      std::string in_shard_of = {}) {
    for (std::size_t i = 0; i + 1 < fields.size() && in_shard_of.empty(); i += 2)
      if (fields[i] == "target_imei") in_shard_of = fields[i + 1];
    std::vector<std::string> argv = {"XADD", outbound(instance, in_shard_of), "*"};
    argv.insert(argv.end(), fields.begin(), fields.end());
    return redis.command(argv).text;
  }
  std::string add_command(const std::string& instance, const std::string& command_id,
                          const std::string& imei, const std::string& expires_at = "0") {
    return add_raw(instance, {"command_id", command_id, "target_imei", imei, "codec", "12",
                              "payload", "getinfo", "expires_at", expires_at});
  }

  tgw::test::redis_backend backend;
  redis::connection redis = backend.connect();
  std::string error;            ///< What a publisher's call said.
  ports::store_failure failed;  ///< What a store's call said.
};

}  // namespace tgw::infra::commands::test
