// The pure parts of the cluster client: the slot of a key, the key that routes a
// command, the slot map from CLUSTER SHARDS, MOVED and ASK, and pipelines read back
// from the wire protocol.
#include <gtest/gtest.h>

#include <array>
#include <string_view>

#include "infra/redis/cluster_client.hpp"
#include "infra/redis/cluster_slots.hpp"
#include "infra/redis/command_keys.hpp"
#include "infra/redis/key_slot.hpp"

namespace tgw::infra::redis {
namespace {

TEST(KeySlot, IsCrc16XmodemModulo16384) {
  // The check value of CRC16-XMODEM, and values the Redis Cluster specification gives.
  EXPECT_EQ(crc16_xmodem("123456789"), 0x31C3);
  EXPECT_EQ(key_slot("123456789"), 0x31C3 % 16384);
  EXPECT_EQ(key_slot("foo"), 12182);
  EXPECT_EQ(key_slot(""), 0);
}

TEST(KeySlot, HashesTheFirstNonEmptyTagOnly) {
  EXPECT_EQ(key_slot("{user1000}.following"), key_slot("{user1000}.followers"));
  EXPECT_EQ(key_slot("{user1000}.following"), key_slot("user1000"));
  EXPECT_EQ(key_slot("foo{bar}{zap}"), key_slot("bar"));
  EXPECT_EQ(key_slot("foo{{bar}}zap"), key_slot("{bar"));
  // An empty tag, or none closed, hashes the whole key.
  EXPECT_EQ(key_slot("foo{}{bar}"), crc16_xmodem("foo{}{bar}") % 16384);
  EXPECT_EQ(key_slot("foo{bar"), crc16_xmodem("foo{bar") % 16384);
}

command_target route(std::initializer_list<std::string_view> argv) {
  return route_of(std::span<const std::string_view>(argv.begin(), argv.size()));
}

TEST(CommandRoute, NamesTheKeyThatDecides) {
  EXPECT_EQ(route({"HGET", "device:1", "online"}).key, "device:1");
  EXPECT_EQ(route({"FCALL", "tgw_persist", "2", "a", "b", "arg"}).key, "a");
  EXPECT_EQ(route({"fcall", "f", "0", "arg"}).route, command_route::any_master);
  EXPECT_EQ(route({"XREADGROUP", "GROUP", "g", "c", "COUNT", "10", "STREAMS", "s", ">"}).key, "s");
  EXPECT_EQ(route({"XINFO", "GROUPS", "telemetry:records"}).key, "telemetry:records");
  EXPECT_EQ(route({"XGROUP", "CREATE", "s", "g", "$"}).key, "s");
  EXPECT_EQ(route({"MEMORY", "USAGE", "k"}).key, "k");
  EXPECT_EQ(route({"PING"}).route, command_route::any_master);
  EXPECT_EQ(route({"WAIT", "1", "100"}).route, command_route::any_master);
  EXPECT_EQ(route({"SCAN", "0"}).route, command_route::any_master);
  EXPECT_EQ(route({"FUNCTION", "LOAD", "REPLACE", "#!lua name=x"}).route,
            command_route::all_masters);
  EXPECT_EQ(route({"FUNCTION", "LIST"}).route, command_route::any_master);
  EXPECT_EQ(route({"CONFIG", "SET", "maxmemory", "1"}).route, command_route::all_masters);
}

value text(std::string_view s) {
  value v;
  v.type = value::kind::string;
  v.text = s;
  return v;
}

value number(std::int64_t n) {
  value v;
  v.type = value::kind::integer;
  v.integer = n;
  return v;
}

value array(std::vector<value> elements) {
  value v;
  v.type = value::kind::array;
  v.elements = std::move(elements);
  return v;
}

value shard_node(std::string_view ip, std::int64_t port, std::string_view role) {
  return array({text("id"), text("abc"), text("port"), number(port), text("ip"), text(ip),
                text("endpoint"), text(ip), text("role"), text(role), text("health"),
                text("online")});
}

TEST(ClusterShards, MapsEverySlotToItsShardsMaster) {
  const value reply = array({
      array({text("slots"), array({number(0), number(100), number(200), number(16383)}),
             text("nodes"),
             array({shard_node("10.0.0.2", 7001, "replica"),
                    shard_node("10.0.0.1", 7000, "master")})}),
      array({text("slots"), array({number(101), number(199)}), text("nodes"),
             array({shard_node("10.0.0.3", 7002, "master")})}),
  });
  std::string error;
  const auto table = parse_cluster_shards(reply, error);
  ASSERT_TRUE(table) << error;
  EXPECT_TRUE(table->complete());
  ASSERT_EQ(table->masters.size(), 2U);
  EXPECT_EQ(table->master_of(0)->port, 7000);
  EXPECT_EQ(table->master_of(150)->port, 7002);
  EXPECT_EQ(table->master_of(16383)->port, 7000);
}

TEST(ClusterShards, SlotsWithoutAMasterStayUncoveredAndGarbageIsAnError) {
  const value reply = array({array({text("slots"), array({number(0), number(99)}), text("nodes"),
                                    array({shard_node("10.0.0.1", 7000, "master")})})});
  std::string error;
  const auto table = parse_cluster_shards(reply, error);
  ASSERT_TRUE(table) << error;
  EXPECT_FALSE(table->complete());
  EXPECT_EQ(table->covered, 100U);
  EXPECT_EQ(table->owner[100], slot_table::uncovered);
  EXPECT_FALSE(parse_cluster_shards(value::make_error("ERR This instance has cluster support "
                                                      "disabled"),
                                    error));
  EXPECT_NE(error.find("cluster support disabled"), std::string::npos);
  EXPECT_FALSE(parse_cluster_shards(
      array({array({text("slots"), array({number(5), number(16384)}), text("nodes"),
                    array({shard_node("10.0.0.1", 7000, "master")})})}),
      error));
}

TEST(Redirect, ReadsMovedAndAskAndNothingElse) {
  const auto moved = parse_redirect(value::make_error("MOVED 3999 127.0.0.1:6381"));
  ASSERT_TRUE(moved);
  EXPECT_FALSE(moved->ask);
  EXPECT_EQ(moved->slot, 3999);
  EXPECT_EQ(moved->to.host, "127.0.0.1");
  EXPECT_EQ(moved->to.port, 6381);
  const auto ask = parse_redirect(value::make_error("ASK 12 ::1:7000"));
  ASSERT_TRUE(ask);
  EXPECT_TRUE(ask->ask);
  EXPECT_EQ(ask->to.host, "::1");
  const auto unknown_host = parse_redirect(value::make_error("MOVED 1 :7000"));
  ASSERT_TRUE(unknown_host);
  EXPECT_EQ(unknown_host->to.host, "");
  EXPECT_FALSE(parse_redirect(value::make_error("MOVED 16384 127.0.0.1:1")));
  EXPECT_FALSE(parse_redirect(value::make_error("MOVED x 127.0.0.1:1")));
  EXPECT_FALSE(parse_redirect(value::make_error("CLUSTERDOWN Hash slot not served")));
  EXPECT_FALSE(parse_redirect(text("MOVED 1 127.0.0.1:1")));
}

}  // namespace
}  // namespace tgw::infra::redis
