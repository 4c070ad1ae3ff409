#include "infra/redis/redis_url.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace tgw::infra::redis {
namespace {

TEST(RedisUrl, ParsesHostPortAndDatabase) {
  std::string error;
  const auto e = parse_redis_url("redis://10.0.0.5:6380/2", error);
  ASSERT_TRUE(e) << error;
  EXPECT_EQ(e->host, "10.0.0.5");
  EXPECT_EQ(e->port, 6380);
  EXPECT_EQ(e->db, 2);
  EXPECT_TRUE(e->password.empty());
}

TEST(RedisUrl, ParsesAclUserAndPassword) {
  std::string error;
  const auto e = parse_redis_url("redis://gw:s3cr%t@redis.internal:6379/0", error);
  ASSERT_TRUE(e) << error;
  EXPECT_EQ(e->user, "gw");
  EXPECT_EQ(e->password, "s3cr%t");
  EXPECT_EQ(e->host, "redis.internal");
}

TEST(RedisUrl, PasswordWithoutUserUsesTheDefaultUser) {
  std::string error;
  const auto e = parse_redis_url("redis://:pw@localhost", error);
  ASSERT_TRUE(e) << error;
  EXPECT_TRUE(e->user.empty());
  EXPECT_EQ(e->password, "pw");
  EXPECT_EQ(e->port, 6379);
}

TEST(RedisUrl, ParsesUnixSocketsAndIpv6) {
  std::string error;
  const auto u = parse_redis_url("unix:///var/run/redis.sock?db=3", error);
  ASSERT_TRUE(u) << error;
  EXPECT_EQ(u->unix_socket, "/var/run/redis.sock");
  EXPECT_EQ(u->db, 3);
  const auto v6 = parse_redis_url("redis://[::1]:7000", error);
  ASSERT_TRUE(v6) << error;
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 7000);
}

TEST(RedisUrl, RefusesMalformedUrlsWithAReason) {
  std::string error;
  EXPECT_FALSE(parse_redis_url("http://localhost", error));
  EXPECT_NE(error.find("redis://"), std::string::npos);
  EXPECT_FALSE(parse_redis_url("redis://host:notaport", error));
  EXPECT_NE(error.find("port"), std::string::npos);
  EXPECT_FALSE(parse_redis_url("redis://host:6379/x", error));
  EXPECT_FALSE(parse_redis_url("unix://", error));
  EXPECT_NE(error.find("missing unix socket path"), std::string::npos) << error;
}

TEST(RedisUrl, ARelativeUnixSocketIsTakenFromTheWorkingDirectory) {
  std::string error;
  const auto e = parse_redis_url("unix://tgw-data/redis.sock?db=1", error);
  ASSERT_TRUE(e) << error;
  EXPECT_EQ(e->unix_socket, std::filesystem::current_path().string() + "/tgw-data/redis.sock");
  EXPECT_EQ(e->db, 1);
}

TEST(RedisUrl, ParsesSentinelListsMasterNameAndDatabase) {
  std::string error;
  const auto e = parse_redis_url(
      "redis+sentinel://gw:pw@10.0.0.1:26380,10.0.0.2,[::1]:26381/main?db=2", error);
  ASSERT_TRUE(e) << error;
  ASSERT_TRUE(e->via_sentinel());
  ASSERT_EQ(e->sentinels.size(), 3U);
  EXPECT_EQ(e->sentinels[0].host, "10.0.0.1");
  EXPECT_EQ(e->sentinels[0].port, 26380);
  EXPECT_EQ(e->sentinels[1].host, "10.0.0.2");
  EXPECT_EQ(e->sentinels[1].port, 26379);
  EXPECT_EQ(e->sentinels[2].host, "::1");
  EXPECT_EQ(e->sentinels[2].port, 26381);
  EXPECT_EQ(e->master_name, "main");
  EXPECT_EQ(e->db, 2);
  EXPECT_EQ(e->user, "gw");
  EXPECT_EQ(e->password, "pw");
  EXPECT_EQ(e->describe(), "redis+sentinel://10.0.0.1:26380,10.0.0.2:26379,[::1]:26381/main?db=2");
  const auto plain = parse_redis_url("redis://localhost", error);
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->via_sentinel());
}

TEST(RedisUrl, RefusesSentinelUrlsWithoutAMasterOrWithABadAddress) {
  std::string error;
  EXPECT_FALSE(parse_redis_url("redis+sentinel://10.0.0.1:26379", error));
  EXPECT_NE(error.find("missing master name"), std::string::npos) << error;
  EXPECT_FALSE(parse_redis_url("redis+sentinel://10.0.0.1:26379/", error));
  EXPECT_NE(error.find("missing master name"), std::string::npos) << error;
  EXPECT_FALSE(parse_redis_url("redis+sentinel://10.0.0.1:x/main", error));
  EXPECT_NE(error.find("bad port 'x'"), std::string::npos) << error;
  EXPECT_FALSE(parse_redis_url("redis+sentinel://a:1,,b:2/main", error));
  EXPECT_NE(error.find("missing host"), std::string::npos) << error;
  EXPECT_FALSE(parse_redis_url("redis+sentinel://a:1/main?db=x", error));
  EXPECT_NE(error.find("?db=N"), std::string::npos) << error;
  EXPECT_FALSE(parse_redis_url("redis+sentinel://a:1/main/extra", error));
  EXPECT_NE(error.find("bad master name"), std::string::npos) << error;
}

TEST(RedisUrl, ParsesClusterSeedsWithDefaultPortsAndCredentials) {
  std::string error;
  const auto e = parse_redis_url("redis+cluster://gw:pw@10.0.0.1:7000,10.0.0.2,[::1]:7002", error);
  ASSERT_TRUE(e) << error;
  ASSERT_TRUE(e->via_cluster());
  ASSERT_EQ(e->cluster_nodes.size(), 3U);
  EXPECT_EQ(e->cluster_nodes[0].host, "10.0.0.1");
  EXPECT_EQ(e->cluster_nodes[0].port, 7000);
  EXPECT_EQ(e->cluster_nodes[1].port, 6379);
  EXPECT_EQ(e->cluster_nodes[2].host, "::1");
  EXPECT_EQ(e->user, "gw");
  EXPECT_EQ(e->password, "pw");
  EXPECT_EQ(e->describe(), "redis+cluster://10.0.0.1:7000,10.0.0.2:6379,[::1]:7002");
}

// Database 0 is the only one a cluster has, so naming it is no mistake.
TEST(RedisUrl, AClusterUrlMayNameDatabaseZero) {
  for (const std::string_view url :
       {"redis+cluster://10.0.0.1:7000/0", "redis+cluster://10.0.0.1:7000?db=0",
        "redis+cluster://10.0.0.1:7000,10.0.0.2:7001/", "redis+cluster://gw:pw@10.0.0.1:7000/0"}) {
    std::string error;
    const auto e = parse_redis_url(url, error);
    ASSERT_TRUE(e) << url << ": " << error;
    EXPECT_TRUE(e->via_cluster()) << url;
    EXPECT_EQ(e->db, 0) << url;
    EXPECT_EQ(e->cluster_nodes.front().port, 7000) << url;
  }
}

TEST(RedisUrl, AClusterUrlWithADatabaseOrABadNodeIsRefused) {
  const std::pair<std::string_view, std::string_view> refused[] = {
      {"redis+cluster://10.0.0.1:7000/2", "database 0 only"},
      {"redis+cluster://10.0.0.1:7000?db=1", "database 0 only"},
      {"redis+cluster://10.0.0.1:7000/00", "database 0 only"},
      {"redis+cluster://10.0.0.1:7000,:7001", "cluster node address: missing host"},
      {"redis+cluster://10.0.0.1:99999", "bad port"}};
  for (const auto& [url, reason] : refused) {
    std::string error;
    EXPECT_FALSE(parse_redis_url(url, error)) << url;
    EXPECT_NE(error.find(reason), std::string::npos) << url << ": " << error;
  }
}

}  // namespace
}  // namespace tgw::infra::redis
