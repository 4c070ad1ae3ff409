// The cluster client against a real 3+3 Redis Cluster started by the fixture: keys
// land on the master of their slot, pipelines keep their order across masters,
// Functions reach every master, MOVED and ASK are followed while a slot moves, a
// killed master's promoted replica is found, and the wrong kind of server, an
// uncovered slot and keys of two slots in one call are clear errors.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "infra/redis/cluster_client.hpp"
#include "infra/redis/connection.hpp"
#include "infra/redis/key_slot.hpp"
#include "infra/redis/resp_writer.hpp"
#include "tests/support/redis_cluster.hpp"
#include "tests/support/redis_server.hpp"

namespace tgw::infra::redis {
namespace {

using namespace std::chrono_literals;
using test::redis_cluster;

// `INCR {prefix}0` ... `INCR {prefix}{count-1}`, each in its master's pipeline, as the
// telemetry writer builds them (every key's master known from the map).
// `routed` is a client or a connection.
std::map<std::size_t, resp_writer> increments_by_master(auto& routed, const std::string& prefix,
                                                        int count) {
  std::map<std::size_t, resp_writer> by_master;
  for (int i = 0; i < count; ++i) {
    const std::string key = prefix + std::to_string(i);
    const auto master = routed.master_of(key_slot(key));
    EXPECT_TRUE(master) << key;
    if (!master) continue;
    by_master[*master].begin(2);
    by_master[*master].arg("INCR");
    by_master[*master].arg(key);
  }
  return by_master;
}

connection connect_to_cluster(const redis_cluster& cluster) {
  return connection({cluster.endpoint(), 500ms, 2000ms, "cluster-test"});
}

bool eventually(auto done, std::chrono::milliseconds limit = 15s) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(100ms);
  }
  return done();
}

// The node id of the node on `port`.
std::string node_id(const redis_cluster& cluster, std::uint16_t port) {
  return cluster.node(port).command({"CLUSTER", "MYID"}).text;
}

TEST(ClusterClient, EachKeyLivesOnTheMasterOfItsSlot) {
  redis_cluster cluster;
  connection c = connect_to_cluster(cluster);
  std::string error;
  ASSERT_TRUE(c.ensure_connected(error)) << error;
  for (int i = 0; i < 300; ++i) {
    const std::string key = "device:35630704244" + std::to_string(1000 + i);
    ASSERT_EQ(c.command({"SET", key, std::to_string(i)}).text, "OK") << key;
  }
  std::map<std::uint16_t, std::int64_t> per_master;
  for (int i = 0; i < 3; ++i) {
    const std::uint16_t port = cluster.ports()[static_cast<std::size_t>(i)];
    per_master[port] = cluster.node(port).command({"DBSIZE"}).integer;
  }
  std::int64_t total = 0;
  for (const auto& [port, n] : per_master) {
    EXPECT_GT(n, 50) << "master " << port << " holds too few of 300 keys";
    total += n;
  }
  EXPECT_EQ(total, 300);
  for (int i = 0; i < 300; i += 7) {
    const std::string key = "device:35630704244" + std::to_string(1000 + i);
    EXPECT_EQ(c.command({"GET", key}).text, std::to_string(i));
    // Our slot is the server's slot.
    EXPECT_EQ(cluster.node(cluster.ports()[0]).command({"CLUSTER", "KEYSLOT", key}).integer,
              key_slot(key));
  }
}

TEST(ClusterClient, APipelineAcrossMastersAnswersInItsOrder) {
  redis_cluster cluster;
  connection c = connect_to_cluster(cluster);
  std::vector<std::vector<std::string>> commands;
  for (int i = 0; i < 60; ++i) commands.push_back({"INCRBY", "k" + std::to_string(i), "5"});
  for (int i = 0; i < 60; ++i) commands.push_back({"GET", "k" + std::to_string(i)});
  const auto replies = c.pipeline(commands);
  ASSERT_EQ(replies.size(), 120U);
  for (int i = 0; i < 60; ++i) {
    EXPECT_EQ(replies[static_cast<std::size_t>(i)].integer, 5);
    EXPECT_EQ(replies[static_cast<std::size_t>(60 + i)].text, "5");
  }
  // The encoded form the telemetry writer uses goes to one master at a time: the
  // caller groups by master (master_of), the client sends each group as it is.
  std::map<std::size_t, resp_writer> by_master = increments_by_master(c, "k", 20);
  EXPECT_GT(by_master.size(), 1U);
  for (auto& [master, w] : by_master) {
    bool sent = false;
    const auto got = c.pipeline_encoded_to(master, w.bytes(), w.commands(), sent);
    EXPECT_TRUE(sent);
    ASSERT_EQ(got.size(), w.commands());
    for (const value& v : got) EXPECT_EQ(v.integer, 6) << v.text;
  }
  // Bytes for another master sent to this one are refused by Redis (MOVED), typed as
  // such: never a write to the wrong master.
  const auto first = by_master.begin();
  const auto other = std::next(first);
  bool sent = false;
  const auto misrouted =
      c.pipeline_encoded_to(first->first, other->second.bytes(), other->second.commands(), sent);
  ASSERT_EQ(misrouted.size(), other->second.commands());
  for (const value& v : misrouted) EXPECT_EQ(v.failure, failure_kind::moved) << v.text;
}

// The telemetry writer's round: every master gets its pipeline, then each one's replies
// are read. A master that is gone fails its own part with an IO error, nothing was sent
// there, and the others' replies stay in step; the map is reloaded only when the caller
// tells learn() after the round, since a reload renumbers the masters.
TEST(ClusterClient, EveryMasterGetsItsPipelineBeforeAnyReplyIsRead) {
  redis_cluster cluster;
  auto routed = std::make_unique<cluster_client>(
      client_options{cluster.endpoint(), 500ms, 2000ms, "cluster-test"});
  std::string error;
  ASSERT_TRUE(routed->ensure_connected(error)) << error;
  std::map<std::size_t, resp_writer> by_master = increments_by_master(*routed, "round", 30);
  ASSERT_EQ(by_master.size(), 3U);
  const std::size_t dead = by_master.begin()->first;
  cluster.kill(routed->masters()[dead].port);
  const std::uint64_t generation = routed->map_generation();

  std::map<std::size_t, bool> written, sent;
  value failed;
  for (auto& [master, w] : by_master) {
    bool reached = false;
    value why;
    written[master] = routed->send_encoded_to(master, w.bytes(), why, reached);
    sent[master] = reached;
    if (master == dead) {
      EXPECT_FALSE(written[master]);
      EXPECT_FALSE(reached) << "the master refused the connection: nothing went out";
      EXPECT_EQ(why.failure, failure_kind::unreachable) << why.text;
      failed = why;
    }
  }
  EXPECT_EQ(routed->map_generation(), generation) << "no reload in the middle of a round";
  for (auto& [master, w] : by_master) {
    if (!written[master]) continue;
    const auto got = routed->receive_from(master, w.commands());
    ASSERT_EQ(got.size(), w.commands());
    for (const value& v : got) EXPECT_EQ(v.integer, 1) << v.text;
  }
  routed->learn(failed);
  EXPECT_GT(routed->map_generation(), generation);
}

TEST(ClusterClient, AFunctionLoadReachesEveryMasterAndCrossSlotIsRefused) {
  redis_cluster cluster;
  connection c = connect_to_cluster(cluster);
  const value loaded = c.command(
      {"FUNCTION", "LOAD", "REPLACE",
       "#!lua name=t\nredis.register_function('t_set', function(keys, args) "
       "for _, k in ipairs(keys) do redis.call('SET', k, args[1]) end return #keys end)"});
  ASSERT_FALSE(loaded.is_error()) << loaded.text;
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(cluster.node(cluster.ports()[static_cast<std::size_t>(i)])
                  .command({"FUNCTION", "LIST"})
                  .elements.size(),
              1U);
  // Keys that share a hash tag share a slot, whichever master that is.
  for (const std::string imei : {"356307042441013", "356307042441021", "356307042441039"})
    EXPECT_EQ(
        c.command({"FCALL", "t_set", "2", "device:{" + imei + "}", "{" + imei + "}:events", "x"})
            .integer,
        2);
  ASSERT_NE(key_slot("a"), key_slot("b"));
  const value cross = c.command({"FCALL", "t_set", "2", "a", "b", "x"});
  EXPECT_TRUE(cross.is_error());
  EXPECT_TRUE(cross.text.starts_with("CROSSSLOT")) << cross.text;
  EXPECT_TRUE(c.command({"GET", "a"}).is_nil());
}

TEST(ClusterClient, MovedAndAskAreFollowedWhileASlotMoves) {
  redis_cluster cluster;
  connection c = connect_to_cluster(cluster);
  const std::string key = "moving";
  const std::uint16_t slot = key_slot(key);
  ASSERT_EQ(c.command({"SET", key, "1"}).text, "OK");
  const std::uint16_t from = cluster.master_of(slot);
  std::uint16_t to = 0;
  for (int i = 0; i < 3; ++i)
    if (cluster.ports()[static_cast<std::size_t>(i)] != from)
      to = cluster.ports()[static_cast<std::size_t>(i)];
  connection source = cluster.node(from);
  connection target = cluster.node(to);
  const std::string slot_text = std::to_string(slot);
  // Migrating: the key moves first, the slot not yet. The source answers ASK.
  ASSERT_EQ(
      target.command({"CLUSTER", "SETSLOT", slot_text, "IMPORTING", node_id(cluster, from)}).text,
      "OK");
  ASSERT_EQ(
      source.command({"CLUSTER", "SETSLOT", slot_text, "MIGRATING", node_id(cluster, to)}).text,
      "OK");
  ASSERT_EQ(source.command({"MIGRATE", "127.0.0.1", std::to_string(to), key, "0", "5000"}).text,
            "OK");
  EXPECT_EQ(c.command({"GET", key}).text, "1");  // ASK, then ASKING on the target
  // In a pipeline too: the redirected commands are sent again in their order.
  const auto asked = c.pipeline({{"GET", key}, {"SET", "elsewhere", "e"}, {"GET", key}});
  ASSERT_EQ(asked.size(), 3U);
  EXPECT_EQ(asked[0].text, "1");
  EXPECT_EQ(asked[1].text, "OK");
  EXPECT_EQ(asked[2].text, "1");
  EXPECT_EQ(c.command({"INCR", key}).integer, 2);
  // Done: the slot belongs to the target. The client's map is stale: MOVED.
  for (const std::uint16_t port : cluster.ports())
    cluster.node(port).command({"CLUSTER", "SETSLOT", slot_text, "NODE", node_id(cluster, to)});
  const auto moved = c.pipeline({{"GET", key}, {"INCR", key}});
  ASSERT_EQ(moved.size(), 2U);
  EXPECT_EQ(moved[0].text, "2");
  EXPECT_EQ(moved[1].integer, 3);
  EXPECT_EQ(target.command({"GET", key}).text, "3");
}

// A WAIT answers for the writes before it on its master. A write redirected away is
// written elsewhere, where that WAIT does not follow it: the WAIT must not confirm it.
// (Before this, the old owner's replica count came back, and a telemetry write whose
// slot had moved could be ACKed unreplicated.)
TEST(ClusterClient, AWaitAfterAWriteThatMovedDoesNotConfirmIt) {
  redis_cluster cluster;
  connection c = connect_to_cluster(cluster);
  const std::string key = "moved-write";
  const std::uint16_t slot = key_slot(key);
  ASSERT_EQ(c.command({"SET", key, "1"}).text, "OK");  // the client's map names `from`
  const std::uint16_t from = cluster.master_of(slot);
  std::uint16_t to = 0;
  for (int i = 0; i < 3; ++i)
    if (cluster.ports()[static_cast<std::size_t>(i)] != from)
      to = cluster.ports()[static_cast<std::size_t>(i)];
  connection source = cluster.node(from);
  ASSERT_EQ(source.command({"DEL", key}).integer, 1);
  for (const std::uint16_t port : cluster.ports())
    cluster.node(port).command(
        {"CLUSTER", "SETSLOT", std::to_string(slot), "NODE", node_id(cluster, to)});
  // `from` still has its replica, so a WAIT there would count 1.
  const auto replies = c.pipeline({{"SET", key, "2"}, {"WAIT", "1", "500"}});
  ASSERT_EQ(replies.size(), 2U);
  EXPECT_EQ(replies[0].text, "OK");  // followed to `to`
  EXPECT_TRUE(replies[1].is_error()) << "WAIT counted " << replies[1].integer;
  EXPECT_NE(replies[1].text.find("WAIT not counted"), std::string::npos) << replies[1].text;
  EXPECT_EQ(cluster.node(to).command({"GET", key}).text, "2");
  // With the map up to date, the same pipeline's WAIT follows the write and counts.
  const auto again = c.pipeline({{"SET", key, "3"}, {"WAIT", "1", "2000"}});
  EXPECT_EQ(again[1].integer, 1) << again[1].text;
}

TEST(ClusterClient, AKilledMastersReplicaIsFoundAfterItsPromotion) {
  redis_cluster cluster;
  connection c = connect_to_cluster(cluster);
  const std::string key = "survivor";
  ASSERT_EQ(c.command({"SET", key, "1"}).text, "OK");
  // The replica has it before the master goes.
  EXPECT_GE(c.command({"WAIT", "1", "2000"}).integer, 1);
  const std::uint16_t master = cluster.master_of(key_slot(key));
  cluster.kill(master);
  // Until the replica takes over, commands for the slot fail; none is ACKed by magic.
  std::string last;
  EXPECT_TRUE(eventually([&] {
    const value v = c.command({"INCR", key});
    last = v.is_error() ? v.text : std::to_string(v.integer);
    return v.is_integer();
  })) << last;
  EXPECT_EQ(c.command({"GET", key}).text, "2");
  EXPECT_NE(cluster.master_of(key_slot(key)), master);
}

TEST(ClusterClient, AServerOutsideAClusterIsAClearError) {
  test::redis_server single;
  endpoint e = single.endpoint();
  e.cluster_nodes.push_back({"127.0.0.1", single.port()});
  connection c({e, 1000ms, 1000ms, "cluster-test"});
  std::string error;
  EXPECT_FALSE(c.ensure_connected(error));
  EXPECT_NE(error.find("is not a cluster node"), std::string::npos) << error;
  const value v = c.command({"SET", "k", "v"});
  EXPECT_TRUE(v.is_error());
  EXPECT_TRUE(single.connect().command({"GET", "k"}).is_nil());
}

TEST(ClusterClient, NoNodeAnsweringIsAnIoErrorThatNamesEachNode) {
  endpoint e;
  const std::uint16_t a = test::free_port();
  const std::uint16_t b = test::free_port();
  e.cluster_nodes = {{"127.0.0.1", a}, {"127.0.0.1", b}};
  connection c({e, 200ms, 500ms, "cluster-test"});
  std::string error;
  EXPECT_FALSE(c.ensure_connected(error));
  EXPECT_NE(error.find("no cluster node answered CLUSTER SHARDS"), std::string::npos) << error;
  EXPECT_NE(error.find("127.0.0.1:" + std::to_string(a)), std::string::npos) << error;
  EXPECT_NE(error.find("127.0.0.1:" + std::to_string(b)), std::string::npos) << error;
  // Callers treat transport failures as transient and retry; nothing was sent anywhere.
  const value v = c.command({"SET", "k", "v"});
  ASSERT_TRUE(v.is_error());
  EXPECT_EQ(v.failure, failure_kind::unreachable) << v.text;
}

TEST(ClusterClient, AnUncoveredSlotIsClusterDownAndNothingIsWritten) {
  redis_cluster cluster;
  connection c = connect_to_cluster(cluster);
  const std::string key = "orphan";
  const std::uint16_t slot = key_slot(key);
  const std::uint16_t owner = cluster.master_of(slot);
  ASSERT_EQ(c.command({"GET", key}).type, value::kind::nil);
  for (const std::uint16_t port : cluster.ports())
    cluster.node(port).command({"CLUSTER", "DELSLOTS", std::to_string(slot)});
  const value v = c.command({"SET", key, "x"});
  ASSERT_TRUE(v.is_error());
  EXPECT_TRUE(v.text.starts_with("CLUSTERDOWN")) << v.text;
  EXPECT_EQ(v.failure, failure_kind::cluster_down);
  EXPECT_TRUE(cluster.node(owner).command({"EXISTS", key}).integer == 0);
}

}  // namespace
}  // namespace tgw::infra::redis
