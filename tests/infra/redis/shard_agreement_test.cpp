// Gateways and readers of one cluster agree on its key shards through the cluster; a
// single node has one unprefixed shard and stores nothing. Built into infra_test
// (single node) and cluster_test (see redis_backend).
#include "infra/redis/shard_agreement.hpp"

#include <gtest/gtest.h>

#include "tests/support/redis_backend.hpp"

namespace tgw::infra::redis {
namespace {

using namespace std::chrono_literals;

TEST(ShardAgreement, ASingleNodeHasOneUnprefixedShardAndStoresNothing) {
  test::redis_backend backend;
  if (backend.on_cluster()) GTEST_SKIP() << "single node only";
  connection c = backend.connect();
  std::string error;
  const auto shards = agree_key_shards(c, 0, error);
  ASSERT_TRUE(shards) << error;
  EXPECT_EQ(shards->count(), 1U);
  EXPECT_FALSE(shards->tagged());
  EXPECT_EQ(read_key_shards(c, error)->count(), 1U);
  EXPECT_EQ(c.command({"EXISTS", key_shards_key}).integer, 0);
}

TEST(ShardAgreement, TheFirstGatewayStoresItsCountAndTheOthersTakeIt) {
  test::redis_backend backend;
  if (!backend.on_cluster()) GTEST_SKIP() << "cluster only";
  connection c = backend.connect();
  std::string error;
  EXPECT_FALSE(read_key_shards(c, error));
  EXPECT_NE(error.find("no gateway has written"), std::string::npos) << error;
  const auto first = agree_key_shards(c, 6, error);
  ASSERT_TRUE(first) << error;
  EXPECT_EQ(first->count(), 6U);
  EXPECT_TRUE(first->tagged());
  // A gateway that asks for nothing takes the stored count; so does a reader.
  EXPECT_EQ(agree_key_shards(c, 0, error)->count(), 6U);
  EXPECT_EQ(read_key_shards(c, error)->count(), 6U);
  // One that asks for another count refuses to start, naming both.
  EXPECT_FALSE(agree_key_shards(c, 9, error));
  EXPECT_NE(error.find("split in 6 shards"), std::string::npos) << error;
  EXPECT_NE(error.find("not 9"), std::string::npos) << error;
}

TEST(ShardAgreement, WithNoCountAskedTheClusterGetsFourShardsPerMaster) {
  test::redis_backend backend;
  if (!backend.on_cluster()) GTEST_SKIP() << "cluster only";
  connection c = backend.connect();
  std::string error;
  const auto shards = agree_key_shards(c, 0, error);
  ASSERT_TRUE(shards) << error;
  EXPECT_EQ(shards->count(), 3 * default_shards_per_master);
}

TEST(ShardAgreement, AStoredValueThatIsNotACountIsAnError) {
  test::redis_backend backend;
  if (!backend.on_cluster()) GTEST_SKIP() << "cluster only";
  connection c = backend.connect();
  c.command({"SET", key_shards_key, "many"});
  std::string error;
  EXPECT_FALSE(agree_key_shards(c, 0, error));
  EXPECT_NE(error.find("'many', not a shard count"), std::string::npos) << error;
  EXPECT_FALSE(read_key_shards(c, error));
}

}  // namespace
}  // namespace tgw::infra::redis
