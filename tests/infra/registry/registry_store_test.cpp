#include "infra/registry/heartbeat_holder.hpp"
#include "infra/registry/redis_registry_store.hpp"
#include "infra/registry/registry_keys.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "tests/support/redis_backend.hpp"

namespace tgw::infra::registry {
namespace {

using namespace std::chrono_literals;

// Runs on a single node (infra_test) and on a Redis Cluster (cluster_test): see
// redis_backend. The helpers read the keys of the shard a device or instance is in.
class RegistryStore : public ::testing::Test {
 protected:
  redis_registry_store store(const std::string& instance) {
    return redis_registry_store({backend.endpoint(), 1000ms, 5000ms, "test"}, instance, shards());
  }
  const redis::key_shards& shards() const { return backend.shards(); }
  const std::string& prefix(const std::string& imei) const { return shards().prefix_of(imei); }
  std::string owner(const std::string& imei) {
    const auto v = redis.command({"HGET", keys::registry_in(prefix(imei)), imei});
    return v.is_nil() ? "(nil)" : v.text;
  }
  bool in_reverse_index(const std::string& instance, const std::string& imei) {
    return redis.command({"SISMEMBER", keys::devices(instance, prefix(imei)), imei}).integer == 1;
  }
  /// Entries in the registry, over every shard.
  std::int64_t registry_size() {
    std::int64_t n = 0;
    for (std::uint32_t s = 0; s < shards().count(); ++s)
      n += redis.command({"HLEN", keys::registry_in(shards().prefix(s))}).integer;
    return n;
  }
  /// The instance's heartbeat expires (in every shard).
  void expire_heartbeat(const std::string& instance) {
    for (std::uint32_t s = 0; s < shards().count(); ++s)
      redis.command({"DEL", keys::heartbeat(instance, shards().prefix(s))});
  }
  /// The keys a test writes by hand: `imei`'s entry naming `owner`, in its shard.
  std::vector<std::vector<std::string>> registered_by_hand(const std::string& imei,
                                                           const std::string& owner) {
    return {{"HSET", keys::registry_in(prefix(imei)), imei, owner},
            {"SADD", keys::devices(owner, prefix(imei)), imei},
            {"SADD", keys::known_instances_in(prefix(imei)), owner}};
  }

  test::redis_backend backend;
  redis::connection redis = backend.connect();
  ports::store_failure error;
};

TEST_F(RegistryStore, RegisterWritesTheEntryAndTheReverseIndex) {
  auto a = store("A");
  ASSERT_TRUE(a.register_device("111111111111111", error)) << error.text();
  EXPECT_EQ(owner("111111111111111"), "A");
  EXPECT_TRUE(in_reverse_index("A", "111111111111111"));
}

TEST_F(RegistryStore, TheLastRegistrationWinsAndTheLoserCannotUnregisterIt) {
  auto a = store("A");
  auto b = store("B");
  ASSERT_TRUE(a.register_device("222222222222222", error));
  ASSERT_TRUE(b.register_device("222222222222222", error));
  EXPECT_EQ(owner("222222222222222"), "B");
  EXPECT_FALSE(in_reverse_index("A", "222222222222222"));  // moved in the same step
  ASSERT_TRUE(a.unregister_device("222222222222222", error));
  EXPECT_EQ(owner("222222222222222"), "B");
  ASSERT_TRUE(b.unregister_device("222222222222222", error));
  EXPECT_EQ(owner("222222222222222"), "(nil)");
  EXPECT_FALSE(in_reverse_index("B", "222222222222222"));
}

TEST_F(RegistryStore, UnregisterAllSkipsDevicesThatMoved) {
  auto a = store("A");
  auto b = store("B");
  std::vector<std::string> held;
  for (int i = 0; i < 50; ++i) {
    held.push_back(std::to_string(300000000000000 + i));
    ASSERT_TRUE(a.register_device(held.back(), error));
  }
  ASSERT_TRUE(b.register_device(held[7], error));
  const auto deleted = a.unregister_all(held, error);
  ASSERT_TRUE(deleted) << error.text();
  EXPECT_EQ(*deleted, 49U);
  EXPECT_EQ(owner(held[7]), "B");
  EXPECT_EQ(registry_size(), 1);
}

// An instance that comes back from a pause or an outage re-asserts the devices it
// still counts. One that reconnected to a live instance meanwhile stays there: taking
// it back would leave it unregistered once the stale session here closes.
TEST_F(RegistryStore, AReassertLeavesLiveOwnersAloneButTakesBackFromTheDead) {
  auto a = store("A");
  auto b = store("B");
  auto c = store("C");
  const std::string moved = "444444444444441", orphaned = "444444444444442",
                    evicted = "444444444444443", kept = "444444444444444";
  for (const auto& imei : {moved, orphaned, evicted, kept})
    ASSERT_TRUE(a.register_device(imei, error)) << error.text();
  ASSERT_TRUE(b.heartbeat(60s, error)) << error.text();  // B is alive, C is not
  ASSERT_TRUE(b.register_device(moved, error));
  ASSERT_TRUE(c.register_device(orphaned, error));
  ASSERT_TRUE(a.unregister_device(evicted, error));  // as the janitor would have

  const auto left = a.reassert({moved, orphaned, evicted, kept}, error);
  ASSERT_TRUE(left) << error.text();
  EXPECT_EQ(*left, 1U);
  EXPECT_EQ(owner(moved), "B");
  EXPECT_TRUE(in_reverse_index("B", moved));
  EXPECT_FALSE(in_reverse_index("A", moved));
  EXPECT_EQ(owner(orphaned), "A");
  EXPECT_FALSE(in_reverse_index("C", orphaned));
  EXPECT_TRUE(in_reverse_index("A", orphaned));
  EXPECT_EQ(owner(evicted), "A");
  EXPECT_TRUE(in_reverse_index("A", evicted));
  EXPECT_EQ(owner(kept), "A");

  // The stale session of the moved device closes here: B keeps it.
  ASSERT_TRUE(a.unregister_device(moved, error));
  EXPECT_EQ(owner(moved), "B");
}

// A janitor reads an instance as dead, then evicts in batches. If the instance comes
// back in between and re-asserts its devices under the same id, the owner check alone
// cannot tell those entries from the stale ones: eviction stops once the heartbeat is
// back.
TEST_F(RegistryStore, EvictionStopsOnceTheInstanceHeartbeatsAgain) {
  auto a = store("A");
  const std::string imei = "555555555555551";
  ASSERT_TRUE(a.register_device(imei, error)) << error.text();
  ASSERT_TRUE(a.heartbeat(60s, error)) << error.text();  // back, its entry re-asserted
  auto evict = [&] {
    return redis.command({"FCALL", "tgw_registry_evict", "2", keys::registry_in(prefix(imei)),
                          keys::heartbeat("A", prefix(imei)), "A", imei});
  };
  EXPECT_EQ(evict().integer, 0);
  EXPECT_EQ(owner(imei), "A");
  ASSERT_EQ(redis.command({"DEL", keys::heartbeat("A", prefix(imei))}).integer, 1);  // dead
  EXPECT_EQ(evict().integer, 1);
  EXPECT_EQ(owner(imei), "(nil)");
}

TEST_F(RegistryStore, MissingFromIndexNamesTheDevicesAnotherInstanceTook) {
  auto a = store("A");
  auto b = store("B");
  std::vector<std::string> held;
  for (int i = 0; i < 1500; ++i) {  // more than one SMISMEMBER call
    held.push_back(std::to_string(600000000000000 + i));
    ASSERT_TRUE(a.register_device(held.back(), error)) << error.text();
  }
  ASSERT_TRUE(b.register_device(held[3], error));
  ASSERT_TRUE(b.register_device(held[1200], error));
  auto missing = a.missing_from_index(held, error);
  ASSERT_TRUE(missing) << error.text();
  std::sort(missing->begin(), missing->end());  // a cluster answers shard by shard
  EXPECT_EQ(*missing, (std::vector<std::string>{held[3], held[1200]}));
}

TEST_F(RegistryStore, HeartbeatCarriesTheTtlAndReportsAMissingKey) {
  auto a = store("A");
  const auto first = a.heartbeat(90s, error);
  ASSERT_TRUE(first) << error.text();
  EXPECT_TRUE(first->was_missing);  // never written before
  EXPECT_EQ(first->taken_by, "");
  for (std::uint32_t s = 0; s < shards().count(); ++s) {
    const auto ttl = redis.command({"TTL", keys::heartbeat("A", shards().prefix(s))}).integer;
    EXPECT_GT(ttl, 0) << "shard " << s;
    EXPECT_LE(ttl, 90);
  }
  EXPECT_FALSE(a.heartbeat(90s, error)->was_missing);
  // Missing in one shard only (its master lost it): presumed dead there.
  redis.command({"DEL", keys::heartbeat("A", shards().prefix(shards().count() - 1))});
  EXPECT_TRUE(a.heartbeat(90s, error)->was_missing);
  EXPECT_FALSE(a.heartbeat(90s, error)->was_missing);
  for (std::uint32_t s = 0; s < shards().count(); ++s)
    EXPECT_EQ(
        redis.command({"SISMEMBER", keys::known_instances_in(shards().prefix(s)), "A"}).integer, 1);
}

// Two processes with one instance id: the heartbeat stays with the one that holds it,
// the other is told who that is, and its shutdown deletes nothing of the holder's.
TEST_F(RegistryStore, AHeartbeatHeldByAnotherProcessIsLeftToIt) {
  heartbeat_holder first = heartbeat_holder::of_this_process(1000ms);
  first.host = "gw-first";
  heartbeat_holder second = first;
  second.host = "gw-second";
  redis_registry_store a({backend.endpoint(), 1000ms, 5000ms, "test"}, "A", shards(),
                         first.value());
  redis_registry_store b({backend.endpoint(), 1000ms, 5000ms, "test"}, "A", shards(),
                         second.value());
  ASSERT_TRUE(a.heartbeat(90s, error)) << error.text();
  const auto taken = b.heartbeat(90s, error);
  ASSERT_TRUE(taken) << error.text();
  EXPECT_EQ(taken->taken_by, first.value());
  EXPECT_EQ(taken->taken_by_described, first.describe());
  for (std::uint32_t s = 0; s < shards().count(); ++s)
    EXPECT_EQ(redis.command({"GET", keys::heartbeat("A", shards().prefix(s))}).text, first.value());
  const auto released_by_b = b.release_heartbeat(error);
  ASSERT_TRUE(released_by_b) << error.text();
  EXPECT_FALSE(*released_by_b);
  EXPECT_EQ(redis.command({"EXISTS", keys::heartbeat("A", shards().prefix(0))}).integer, 1);
  EXPECT_EQ(a.heartbeat(90s, error)->taken_by, "");
  const auto released_by_a = a.release_heartbeat(error);
  ASSERT_TRUE(released_by_a) << error.text();
  EXPECT_TRUE(*released_by_a);
  for (std::uint32_t s = 0; s < shards().count(); ++s)
    EXPECT_EQ(redis.command({"EXISTS", keys::heartbeat("A", shards().prefix(s))}).integer, 0);
  // Once the holder is gone, the other one writes it.
  const auto after = b.heartbeat(90s, error);
  ASSERT_TRUE(after) << error.text();
  EXPECT_EQ(after->taken_by, "");
  EXPECT_TRUE(after->was_missing);
}

TEST_F(RegistryStore, TheJanitorEvictsADeadInstanceButNotAMovedDevice) {
  for (const janitor_mode mode : {janitor_mode::reverse_index, janitor_mode::scan}) {
    redis.command({"FLUSHALL"});  // on a cluster: every master
    auto dead = store("dead");
    auto live = store("live");
    ASSERT_TRUE(dead.heartbeat(1s, error));
    ASSERT_TRUE(live.heartbeat(90s, error));
    for (int i = 0; i < 25; ++i)
      ASSERT_TRUE(dead.register_device(std::to_string(400000000000000 + i), error));
    ASSERT_TRUE(live.register_device("400000000000003", error));  // moved while dead
    ASSERT_TRUE(live.register_device("499999999999999", error));
    expire_heartbeat("dead");
    const auto report = live.janitor_pass(mode, 10, error);
    ASSERT_TRUE(report) << error.text();
    EXPECT_EQ(report->evicted, 24U);
    ASSERT_EQ(report->dead, std::vector<std::string>{"dead"});
    EXPECT_EQ(owner("400000000000003"), "live");
    EXPECT_EQ(owner("499999999999999"), "live");
    EXPECT_EQ(registry_size(), 2);
    if (mode == janitor_mode::reverse_index) {
      for (std::uint32_t s = 0; s < shards().count(); ++s) {
        const std::string& p = shards().prefix(s);
        EXPECT_EQ(redis.command({"EXISTS", keys::devices("dead", p)}).integer, 0);
        EXPECT_EQ(redis.command({"SISMEMBER", keys::known_instances_in(p), "dead"}).integer, 0);
      }
    }
    // A second pass finds nothing more to do.
    EXPECT_EQ(live.janitor_pass(mode, 10, error)->evicted, 0U);
  }
}

TEST_F(RegistryStore, TwoJanitorsAtOnceCountEachEvictionOnce) {
  auto dead = store("dead");
  constexpr int devices = 3000;
  std::vector<std::vector<std::string>> commands;
  for (int i = 0; i < devices; ++i) {
    const std::string imei = std::to_string(500000000000000 + i);
    for (auto& c : registered_by_hand(imei, "dead")) commands.push_back(std::move(c));
  }
  redis.pipeline(commands);
  std::uint64_t evicted[2] = {0, 0};
  std::thread first([&] {
    auto j = store("j1");
    ports::store_failure e;
    evicted[0] = j.janitor_pass(janitor_mode::reverse_index, 100, e)->evicted;
  });
  std::thread second([&] {
    auto j = store("j2");
    ports::store_failure e;
    evicted[1] = j.janitor_pass(janitor_mode::reverse_index, 100, e)->evicted;
  });
  first.join();
  second.join();
  EXPECT_EQ(evicted[0] + evicted[1], static_cast<std::uint64_t>(devices));
  EXPECT_EQ(registry_size(), 0);
}

TEST_F(RegistryStore, RedisDownFailsWithAReason) {
  if (backend.on_cluster()) GTEST_SKIP() << "a node outage on a cluster is a failover test";
  auto a = store("A");
  backend.server()->stop();
  EXPECT_FALSE(a.register_device("111111111111111", error));
  // A typed failure, and the cause an operator reads: Redis is unreachable.
  EXPECT_EQ(error.kind, ports::failure_kind::unreachable) << error.text();
  EXPECT_EQ(error.cause.label, "connection") << error.text();
  EXPECT_FALSE(a.heartbeat(90s, error).has_value());
  backend.server()->start();
  EXPECT_TRUE(a.register_device("111111111111111", error)) << error.text();
}

}  // namespace
}  // namespace tgw::infra::registry
