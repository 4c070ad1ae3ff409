// A connection through Redis Sentinel, against real redis-server and redis-sentinel
// processes: it finds the master by name, never settles on a replica, follows a
// failover by itself, and says clearly when no sentinel answers or none knows the name.
// Waits poll up to a deadline; nothing asserts on how long anything took.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "infra/redis/connection.hpp"
#include "infra/redis/sentinel_watch.hpp"
#include "tests/support/redis_ha.hpp"
#include "tests/support/test_device.hpp"

namespace tgw::test {
namespace {

using namespace std::chrono_literals;
using infra::redis::connection;

connection through(const infra::redis::endpoint& where) {
  return connection({where, 300ms, 1000ms, "sentinel-test"});
}

/// Retries `argv` until it succeeds or the deadline passes: what a writer's backoff
/// does across a failover.
infra::redis::value eventually_ok(connection& c, std::initializer_list<std::string_view> argv,
                                  std::chrono::milliseconds deadline = 20s) {
  const auto end = std::chrono::steady_clock::now() + deadline;
  infra::redis::value v;
  while (std::chrono::steady_clock::now() < end) {
    v = c.command(argv);
    if (!v.is_error()) return v;
    std::this_thread::sleep_for(100ms);
  }
  return v;
}

TEST(SentinelConnection, FindsTheMasterByNameAndWritesThere) {
  redis_ha ha;
  auto c = through(ha.endpoint());
  EXPECT_EQ(c.command({"SET", "k", "v"}).text, "OK");
  EXPECT_EQ(c.server(), "master tgw at 127.0.0.1:" + std::to_string(ha.data_ports()[0]));
  EXPECT_EQ(ha.connect(ha.data_ports()[0]).command({"GET", "k"}).text, "v");
}

TEST(SentinelConnection, AWrongMasterNameOrNoSentinelIsAClearError) {
  redis_ha ha;
  auto wrong = ha.endpoint();
  wrong.master_name = "nope";
  auto c = through(wrong);
  std::string error;
  EXPECT_FALSE(c.ensure_connected(error));
  EXPECT_NE(error.find("no sentinel knows master 'nope'"), std::string::npos) << error;

  auto gone = ha.endpoint();
  for (auto& s : gone.sentinels) s.port = free_port();
  auto d = through(gone);
  EXPECT_FALSE(d.ensure_connected(error));
  EXPECT_NE(error.find("no sentinel reachable for master 'tgw'"), std::string::npos) << error;
  // A command on it fails the same way, as an IO error the stores already handle.
  const auto v = d.command({"PING"});
  EXPECT_TRUE(v.is_error());
  EXPECT_TRUE(v.text.starts_with("IO ")) << v.text;
}

TEST(SentinelConnection, OneSentinelDownIsNoProblem) {
  redis_ha ha;
  ha.kill(ha.sentinel_ports()[0]);
  auto c = through(ha.endpoint());
  EXPECT_EQ(c.command({"SET", "k", "v"}).text, "OK");
}

TEST(SentinelConnection, FollowsAFailoverAfterTheMasterIsKilled) {
  redis_ha ha;
  auto c = through(ha.endpoint());
  ASSERT_EQ(c.command({"SET", "before", "1"}).text, "OK");
  // Acknowledged by the replica before the master dies, so the failover keeps it.
  ASSERT_EQ(c.command({"WAIT", "1", "2000"}).integer, 1);
  const std::uint16_t old_master = ha.data_ports()[0];
  ha.kill(old_master);
  EXPECT_TRUE(c.command({"SET", "during", "1"}).is_error());
  ASSERT_TRUE(ha.wait_for_new_master(old_master, 30s));
  EXPECT_EQ(eventually_ok(c, {"SET", "after", "1"}).text, "OK");
  EXPECT_EQ(c.server(), "master tgw at 127.0.0.1:" + std::to_string(ha.data_ports()[1]));
  EXPECT_EQ(c.command({"GET", "before"}).text, "1");
}

TEST(SentinelConnection, APlannedFailoverUnderAnOpenConnectionMovesIt) {
  redis_ha ha;
  auto c = through(ha.endpoint());
  ASSERT_EQ(c.command({"SET", "k", "1"}).text, "OK");
  ASSERT_TRUE(c.connected());
  // A planned failover: the old master stays up and becomes a replica.
  const auto forced =
      ha.connect(ha.sentinel_ports()[0]).command({"SENTINEL", "FAILOVER", redis_ha::master_name});
  ASSERT_EQ(forced.text, "OK") << forced.text;
  ASSERT_TRUE(ha.wait_for_new_master(ha.data_ports()[0], 30s));
  // The announced switch (or, failing that, -READONLY once the old master is a
  // replica) moves the connection: the write lands on the new master.
  const std::string new_master = "master tgw at 127.0.0.1:" + std::to_string(ha.data_ports()[1]);
  EXPECT_TRUE(eventually([&] {
    return c.command({"SET", "k", "2"}).text == "OK" && c.server() == new_master;
  }));
  EXPECT_EQ(ha.connect(ha.data_ports()[1]).command({"GET", "k"}).text, "2");
}

// An announced failover moves a connection even when its old master would still take
// the write (a master cut off from the sentinels goes on accepting writes).
TEST(SentinelConnection, LeavesItsMasterWhenTheSentinelsAnnounceAFailover) {
  redis_ha ha;
  auto c = through(ha.endpoint());
  const auto id = c.command({"CLIENT", "ID"});
  ASSERT_TRUE(id.as_int()) << id.text;
  const std::uint16_t old_master = ha.data_ports()[0];
  auto watch = infra::redis::sentinel_watch::of(ha.endpoint());
  const auto before = watch->epoch();
  ASSERT_EQ(ha.connect(ha.sentinel_ports()[0])
                .command({"SENTINEL", "FAILOVER", redis_ha::master_name})
                .text,
            "OK");
  ASSERT_TRUE(eventually([&] { return watch->epoch() > before; }, 30s));
  EXPECT_FALSE(c.command({"PING"}).is_error());
  // The connection the test made first is gone from the old master.
  const std::string mine = "id=" + std::to_string(*id.as_int()) + " ";
  EXPECT_TRUE(eventually([&] {
    return ha.connect(old_master).command({"CLIENT", "LIST"}).text.find(mine) == std::string::npos;
  }));
}

// A sentinel that slept through a failover names the old master, which, restarted,
// says it is a master (an empty one) until the others reconfigure it. The connection
// follows the sentinel with the newest configuration instead.
TEST(SentinelConnection, AStaleSentinelIsOutvotedByTheNewestConfiguration) {
  redis_ha ha;
  const std::uint16_t stale = ha.sentinel_ports()[0];  // asked first
  const std::uint16_t old_master = ha.data_ports()[0];
  ha.kill(stale);
  ha.kill(old_master);
  ASSERT_TRUE(ha.wait_for_new_master(old_master, 30s));
  ha.restart(old_master);
  ha.restart(stale);
  ASSERT_EQ(ha.connect(old_master).command({"ROLE"}).elements.at(0).text, "master");
  auto c = through(ha.endpoint());
  EXPECT_EQ(c.command({"SET", "k", "v"}).text, "OK");
  EXPECT_EQ(c.server(), "master tgw at 127.0.0.1:" + std::to_string(ha.data_ports()[1]));
}

TEST(SentinelConnection, NeverSettlesOnAReplica) {
  redis_ha ha;
  // Sentinels that name a replica (stale, mid-failover) are checked against ROLE.
  infra::redis::endpoint replica = ha.connect(ha.data_ports()[1]).settings().where;
  auto direct = connection({replica, 1000ms, 1000ms, ""});
  const auto refused = direct.command({"SET", "k", "v"});
  EXPECT_TRUE(refused.text.starts_with("READONLY")) << refused.text;
  // -READONLY drops the connection, so the next command reconnects (here to the same
  // replica, which a plain URL names; through the sentinels it would be the master).
  EXPECT_FALSE(direct.connected());
}

}  // namespace
}  // namespace tgw::test
