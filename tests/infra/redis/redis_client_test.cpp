// The Redis seam: the URL's scheme picks one of three clients that sit side by side
// on server_link, and the link itself: it runs nothing while closed, applies its login
// and database at every open, and leaves a server that answers -READONLY. The clients'
// behaviour across outages and failovers is tested against real servers in
// sentinel_connection_test.cpp, cluster_client_test.cpp and the stores' tests.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "infra/redis/cluster_client.hpp"
#include "infra/redis/connection.hpp"
#include "infra/redis/direct_client.hpp"
#include "infra/redis/sentinel_client.hpp"
#include "infra/redis/server_link.hpp"
#include "tests/support/redis_server.hpp"

namespace tgw::infra::redis {
namespace {

using namespace std::chrono_literals;

endpoint parsed(const char* url) {
  std::string error;
  const auto e = parse_redis_url(url, error);
  EXPECT_TRUE(e) << url << ": " << error;
  return e.value_or(endpoint{});
}

std::unique_ptr<client> client_for(const char* url) {
  return make_client({parsed(url), 200ms, 200ms, ""});
}

TEST(RedisClient, TheUrlsSchemeChoosesTheClient) {
  const auto direct = client_for("redis://127.0.0.1:1/2");
  const auto local = client_for("unix:///tmp/tgw-no-such.sock");
  const auto sentinel = client_for("redis+sentinel://127.0.0.1:1/mymaster");
  const auto cluster = client_for("redis+cluster://127.0.0.1:1");
  EXPECT_NE(dynamic_cast<direct_client*>(direct.get()), nullptr);
  EXPECT_NE(dynamic_cast<direct_client*>(local.get()), nullptr);
  EXPECT_NE(dynamic_cast<sentinel_client*>(sentinel.get()), nullptr);
  EXPECT_NE(dynamic_cast<cluster_client*>(cluster.get()), nullptr);
  // A single server is master 0 of every slot, and its map never changes.
  EXPECT_EQ(direct->master_of(0), 0U);
  EXPECT_EQ(sentinel->master_of(16383), 0U);
  EXPECT_EQ(direct->map_generation(), 0U);
  EXPECT_EQ(direct->master_count(), 1U);
  EXPECT_EQ(cluster->master_count(), 0U);  // no node answers: no map
  EXPECT_EQ(direct->server(), "redis://127.0.0.1:1/2");
}

TEST(RedisClient, NobodyListeningIsAnIoErrorNamingTheServer) {
  const auto direct = client_for("redis://127.0.0.1:1");
  constexpr std::string_view ping[] = {"PING"};
  const value v = direct->command(ping);
  ASSERT_TRUE(v.is_error());
  EXPECT_EQ(v.failure, failure_kind::unreachable);
  EXPECT_TRUE(v.text.starts_with("IO connect to redis://127.0.0.1:1")) << v.text;
  EXPECT_FALSE(direct->connected());
  value failed;
  bool sent = false;
  EXPECT_FALSE(direct->send_encoded_to(0, "*1\r\n$4\r\nPING\r\n", failed, sent));
  EXPECT_EQ(failed.failure, failure_kind::unreachable) << failed.text;
  EXPECT_TRUE(sent) << "one server: an attempt counts as sent, a partial write may have run";
}

// Every client serves the routed pipeline calls; a cluster without a map has no master
// to send to, and says so as a transport failure with nothing sent.
TEST(RedisClient, AClusterWithoutAMapSendsNothingAndSaysSo) {
  const auto cluster = client_for("redis+cluster://127.0.0.1:1");
  EXPECT_FALSE(cluster->master_of(0));
  value failed;
  bool sent = true;
  EXPECT_FALSE(cluster->send_encoded_to(0, "*1\r\n$4\r\nPING\r\n", failed, sent));
  EXPECT_FALSE(sent);
  EXPECT_EQ(failed.failure, failure_kind::unreachable) << failed.text;
}

TEST(ServerLink, AClosedLinkRunsNothingAndSaysSo) {
  server_link link({200ms, 200ms, ""});
  EXPECT_FALSE(link.is_open());
  EXPECT_EQ(link.command({"PING"}).text, "IO not connected");
  EXPECT_EQ(link.command({"PING"}).failure, failure_kind::unreachable);
  const auto replies = link.pipeline({{"PING"}, {"PING"}});
  ASSERT_EQ(replies.size(), 2U);
  EXPECT_EQ(replies[1].text, "IO not connected");
  value failed;
  EXPECT_FALSE(link.send_encoded("*1\r\n$4\r\nPING\r\n", failed));
  EXPECT_EQ(failed.failure, failure_kind::unreachable);
  EXPECT_EQ(link.receive_replies(1).front().text, "IO not connected");
}

TEST(ServerLink, EveryOpenAppliesTheDatabaseAndTheClientName) {
  test::redis_server server;
  endpoint at = server.endpoint();
  at.db = 3;
  server_link link({1000ms, 1000ms, "link-test"});
  std::string error;
  ASSERT_TRUE(link.open(at, at.describe(), error)) << error;
  EXPECT_EQ(link.command({"SET", "k", "1"}).text, "OK");
  server.stop();
  EXPECT_EQ(link.command({"PING"}).failure, failure_kind::unreachable) << "the server is gone";
  EXPECT_FALSE(link.is_open());
  server.start();
  ASSERT_TRUE(link.open(at, at.describe(), error)) << error;
  EXPECT_EQ(link.command({"CLIENT", "GETNAME"}).text, "link-test");
  EXPECT_EQ(link.command({"SET", "after", "1"}).text, "OK");
  connection db3({at, 1000ms, 1000ms, ""});
  EXPECT_EQ(db3.command({"GET", "after"}).text, "1") << "written to database 3 again";
  connection db0 = server.connect();
  EXPECT_TRUE(db0.command({"GET", "after"}).is_nil());
}

TEST(ServerLink, AReplicaAnsweringReadonlyIsLeft) {
  test::redis_server master;
  test::redis_server replica;
  connection r = replica.connect();
  const std::string port = std::to_string(master.port());
  ASSERT_EQ(r.command({"REPLICAOF", "127.0.0.1", port}).text, "OK");
  server_link link({1000ms, 1000ms, ""});
  std::string error;
  const endpoint at = replica.endpoint();
  ASSERT_TRUE(link.open(at, at.describe(), error)) << error;
  const value v = link.command({"SET", "k", "1"});
  EXPECT_TRUE(v.text.starts_with("READONLY")) << v.text;
  EXPECT_FALSE(link.is_open()) << "a demoted server is not written to again";
}

}  // namespace
}  // namespace tgw::infra::redis
