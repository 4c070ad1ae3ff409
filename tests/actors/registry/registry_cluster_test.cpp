// Gateway instances (`tgw serve` processes) sharing one redis-server: the registry,
// the heartbeat and the janitor as other systems see them in Redis. Timings are
// shortened by flags; waits poll up to a deadline.
#include <signal.h>

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <thread>

#include "infra/registry/redis_registry_store.hpp"
#include "infra/registry/registry_keys.hpp"
#include "tests/support/redis_backend.hpp"
#include "tests/support/test_device.hpp"

namespace tgw::test {
namespace {

using namespace std::chrono_literals;
namespace keys = infra::registry::keys;

bytes handshake(const std::string& imei) {
  bytes b{0, static_cast<std::uint8_t>(imei.size())};
  b.insert(b.end(), imei.begin(), imei.end());
  return b;
}

std::string http_get(std::uint16_t port, const std::string& path) {
  const std::string cmd = "exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(port) + "; printf 'GET " +
                          path + " HTTP/1.0\\r\\n\\r\\n' >&3; cat <&3";
  std::string out;
  FILE* pipe = popen(("bash -c \"" + cmd + "\" 2>/dev/null").c_str(), "r");
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  pclose(pipe);
  return out;
}

class RegistryCluster : public ::testing::Test {
 protected:
  struct instance {
    std::uint16_t port = 0;
    std::uint16_t metrics_port = 0;
    std::optional<child_process> process;
  };

  instance start(const std::string& id, std::vector<std::string> extra = {}) {
    instance in;
    in.port = free_port();
    in.metrics_port = free_port();
    std::vector<std::string> argv = {TGW_BINARY,
                                     "serve",
                                     "--bind",
                                     "127.0.0.1",
                                     "--port",
                                     std::to_string(in.port),
                                     "--redis",
                                     backend.url(),
                                     "--metrics-addr",
                                     "127.0.0.1:" + std::to_string(in.metrics_port),
                                     "--instance-id",
                                     id,
                                     "--heartbeat-interval-ms",
                                     "300",
                                     "--heartbeat-ttl-s",
                                     "2",
                                     "--janitor-interval-ms",
                                     "300"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    in.process.emplace(argv, ::testing::TempDir() + "/" + id + ".log");
    EXPECT_TRUE(eventually([&] { return device(in.port).connected(); }));
    return in;
  }
  std::string owner(const std::string& imei) {
    const auto v = redis.command({"HGET", keys::registry_in(backend.prefix(imei)), imei});
    return v.is_nil() ? "(nil)" : v.text;
  }
  bool indexed(const std::string& id, const std::string& imei) {
    return redis.command({"SISMEMBER", keys::devices(id, backend.prefix(imei)), imei}).integer == 1;
  }
  /// Entries in the registry (over every shard on a cluster).
  std::int64_t registry_size() {
    std::int64_t n = 0;
    for (const auto& key : backend.in_every_shard(keys::registry))
      n += redis.command({"HLEN", key}).integer;
    return n;
  }
  /// The instance's heartbeat key in the first shard (it writes one in every shard).
  std::string heartbeat(const std::string& id) {
    return keys::heartbeat(id, backend.shards().prefix(0));
  }
  static void identify(const device& d, const std::string& imei) {
    d.send(handshake(imei));
    ASSERT_EQ(d.receive(1), bytes{0x01});
  }

  redis_server& server() { return *backend.server(); }

  redis_backend backend;
  infra::redis::connection redis = backend.connect();
};

TEST_F(RegistryCluster, RegistersAfterTheHandshakeAndUnregistersOnClose) {
  auto a = start("A");
  {
    device d(a.port);
    identify(d, "356307042441013");
    EXPECT_TRUE(eventually([&] { return owner("356307042441013") == "A"; }));
    EXPECT_TRUE(indexed("A", "356307042441013"));
  }
  EXPECT_TRUE(eventually([&] { return owner("356307042441013") == "(nil)"; }));
}

TEST_F(RegistryCluster, TheLastInstanceToRegisterKeepsTheEntry) {
  auto a = start("A");
  auto b = start("B");
  auto on_a = std::make_unique<device>(a.port);
  identify(*on_a, "356307042441013");
  ASSERT_TRUE(eventually([&] { return owner("356307042441013") == "A"; }));
  device on_b(b.port);
  identify(on_b, "356307042441013");
  ASSERT_TRUE(eventually([&] { return owner("356307042441013") == "B"; }));
  on_a.reset();  // A's stale connection closes: its unregister must leave B's entry
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(owner("356307042441013"), "B");
  EXPECT_FALSE(indexed("A", "356307042441013"));
}

// Registrations are ordered within an instance, not across instances. A session whose
// handshake stalled (Redis paused) can register late on instance S, after its device
// gave up, reconnected to B and registered there; S takes the entry, then its stale
// session closes and, owner-checked, deletes it. B holds the device and must put the
// entry back: its reverse index shows the loss.
TEST_F(RegistryCluster, AnEntryALateRegistrationElsewhereTookAndDeletedIsPutBack) {
  auto b = start("B");
  device on_b(b.port);
  identify(on_b, "356307042441013");
  ASSERT_TRUE(eventually([&] { return owner("356307042441013") == "B"; }));
  infra::registry::redis_registry_store stale({backend.endpoint(), 1000ms, 5000ms, "stale"}, "S",
                                              backend.shards());
  ports::store_failure error;
  ASSERT_TRUE(stale.register_device("356307042441013", error)) << error.text();
  ASSERT_TRUE(stale.unregister_device("356307042441013", error)) << error.text();
  ASSERT_EQ(owner("356307042441013"), "(nil)");
  EXPECT_TRUE(eventually([&] { return owner("356307042441013") == "B"; }))
      << "B still holds the device; its entry must come back within a heartbeat";
  EXPECT_TRUE(indexed("B", "356307042441013"));
}

TEST_F(RegistryCluster, TheHeartbeatCarriesItsTtlAndIsRefreshed) {
  auto a = start("A");
  ASSERT_TRUE(eventually([&] { return redis.command({"EXISTS", heartbeat("A")}).integer == 1; }));
  const auto ttl = redis.command({"PTTL", heartbeat("A")}).integer;
  EXPECT_GT(ttl, 0);
  EXPECT_LE(ttl, 2000);
  // Refreshed: its TTL, which falls as time passes, is put back up between two reads.
  // (The value names the holder and stays the same.)
  EXPECT_TRUE(eventually([&] {
    const auto before = redis.command({"PTTL", heartbeat("A")}).integer;
    std::this_thread::sleep_for(std::chrono::milliseconds{50});
    return redis.command({"PTTL", heartbeat("A")}).integer > before;
  }));
  EXPECT_NE(redis.command({"GET", heartbeat("A")}).text.find("host="), std::string::npos);
}

TEST_F(RegistryCluster, SigtermUnregistersEveryHeldDevice) {
  auto a = start("A");
  std::vector<std::unique_ptr<device>> devices;
  for (int i = 0; i < 5; ++i) {
    devices.push_back(std::make_unique<device>(a.port));
    identify(*devices.back(), std::to_string(356307042441000 + i));
  }
  ASSERT_TRUE(eventually([&] { return registry_size() == 5; }));
  a.process->signal(SIGTERM);
  EXPECT_EQ(a.process->wait(), 0);
  EXPECT_EQ(registry_size(), 0);
}

TEST_F(RegistryCluster, AKilledInstanceIsCleanedUpButAMovedDeviceKeepsItsEntry) {
  auto a = start("A");
  auto b = start("B");
  std::vector<std::unique_ptr<device>> on_a;
  for (int i = 0; i < 4; ++i) {
    on_a.push_back(std::make_unique<device>(a.port));
    identify(*on_a.back(), std::to_string(356307042441000 + i));
  }
  ASSERT_TRUE(eventually([&] { return registry_size() == 4; }));
  a.process->signal(SIGKILL);
  a.process->wait();
  device moved(b.port);  // one device reconnects to B before the janitor runs
  identify(moved, "356307042441002");
  ASSERT_TRUE(eventually([&] { return owner("356307042441002") == "B"; }));
  EXPECT_TRUE(eventually([&] { return registry_size() == 1; }, 10s));
  EXPECT_EQ(owner("356307042441002"), "B");
  // The janitor's pass evicts the entries first, then forgets the instance in each shard,
  // then counts: the registry shrinks before the pass has ended.
  for (const auto& key : backend.in_every_shard(keys::known_instances))
    EXPECT_TRUE(eventually([&] {
      return redis.command({"SISMEMBER", key, "A"}).integer == 0;
    })) << key;
  std::string metrics;
  EXPECT_TRUE(eventually([&] {
    metrics = http_get(b.metrics_port, "/metrics");
    return metrics.find(R"(teltonika_registry_janitor_evicted_total{instance_id="B"} 3)") !=
           std::string::npos;
  })) << metrics;
}

TEST_F(RegistryCluster, RedisDownAtRegistrationAcceptsTheDeviceAndRepairsLater) {
  if (backend.on_cluster()) GTEST_SKIP() << "a node outage on a cluster is a failover test";
  auto a = start("A");
  server().stop();
  device d(a.port);
  identify(d, "356307042441013");  // accepted although Redis is gone
  server().start();                // an empty Redis: nothing survived
  infra::redis::connection after = server().connect();
  EXPECT_TRUE(eventually([&] {
    const auto v = after.command({"HGET", keys::registry, "356307042441013"});
    return !v.is_nil() && v.text == "A";
  }));
  const std::string metrics = http_get(a.metrics_port, "/metrics");
  EXPECT_EQ(metrics.find(R"(teltonika_registry_failures_total{instance_id="A"} 0)"),
            std::string::npos)
      << metrics;
}

std::string run_tgw(const std::string& args) {
  std::string out;
  FILE* pipe = popen((std::string(TGW_BINARY) + " " + args + " 2>&1").c_str(), "r");
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  pclose(pipe);
  return out;
}

TEST_F(RegistryCluster, TgwRegistryShowsOwnersCountsAndRunsOneJanitorPass) {
  // A gateway that ran on the cluster stored its shard count; nothing else was written.
  if (backend.on_cluster())
    redis.command({"SET", "tgw:telemetry-shards", std::to_string(backend.shards().count())});
  const std::string url = "--redis " + backend.url();
  const std::string dead_imei = "111111111111111", live_imei = "222222222222222";
  const std::string& dead_at = backend.prefix(dead_imei);
  redis.command({"HSET", keys::registry_in(dead_at), dead_imei, "dead"});
  redis.command({"HSET", keys::registry_in(backend.prefix(live_imei)), live_imei, "live"});
  redis.command({"SADD", keys::devices("dead", dead_at), dead_imei});
  redis.command({"SADD", keys::known_instances_in(dead_at), "dead", "live"});
  for (const auto& key : backend.in_every_shard(keys::heartbeat("live")))
    redis.command({"SET", key, "1"});
  EXPECT_EQ(run_tgw("registry --json --imei 222222222222222 " + url),
            R"({"imei":"222222222222222","owner":"live","owner_alive":true})"
            "\n");
  EXPECT_NE(run_tgw("registry --json " + url).find(R"("entries_of_dead_owners":1)"),
            std::string::npos);
  EXPECT_EQ(run_tgw("registry --json --once " + url),
            R"({"instances_checked":2,"dead":["dead"],"evicted":1})"
            "\n");
  EXPECT_EQ(owner("111111111111111"), "(nil)");
}

}  // namespace
}  // namespace tgw::test
