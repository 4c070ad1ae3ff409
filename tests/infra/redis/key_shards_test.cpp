#include "infra/redis/key_shards.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "infra/redis/key_slot.hpp"

namespace tgw::infra::redis {
namespace {

std::string imei(std::uint64_t n) {
  return std::to_string(356307040000000ULL + n);
}

TEST(KeyShards, ASingleNodeHasOneShardWithoutPrefixSoKeysKeepTheirNames) {
  const key_shards single;
  EXPECT_FALSE(single.tagged());
  EXPECT_EQ(single.count(), 1U);
  for (std::uint64_t n = 0; n < 100; ++n) {
    EXPECT_EQ(single.shard_of(imei(n)), 0U);
    EXPECT_EQ(single.prefix_of(imei(n)), "");
  }
}

// The tags' slots lie one in each equal part of the slot range, so masters that each
// own an equal range (as `redis-cli --cluster create` gives them) get equal shares.
TEST(KeyShards, EachTagLiesInItsOwnPartOfTheSlotRange) {
  for (const std::uint32_t count : {1U, 3U, 12U, 64U, max_key_shards}) {
    const key_shards shards = key_shards::cluster(count);
    ASSERT_EQ(shards.count(), count);
    EXPECT_TRUE(shards.tagged());
    std::set<std::string> distinct;
    for (std::uint32_t s = 0; s < count; ++s) {
      const std::string& prefix = shards.prefix(s);
      ASSERT_GE(prefix.size(), 3U);
      EXPECT_EQ(prefix.front(), '{');
      EXPECT_EQ(prefix.back(), '}');
      // Every key of the shard hashes to the tag's slot.
      const std::uint16_t slot = key_slot(prefix + "connections:registry");
      EXPECT_EQ(key_slot(prefix + "journal:" + imei(s)), slot);
      EXPECT_GE(slot, std::uint64_t{cluster_slots} * s / count) << prefix;
      EXPECT_LT(slot, std::uint64_t{cluster_slots} * (s + 1) / count) << prefix;
      distinct.insert(prefix);
    }
    EXPECT_EQ(distinct.size(), count);
  }
}

// Every process that knows the shard count must name the same keys.
TEST(KeyShards, TheSameCountGivesTheSameTagsAndShards) {
  const key_shards a = key_shards::cluster(12), b = key_shards::cluster(12);
  for (std::uint32_t s = 0; s < 12; ++s) EXPECT_EQ(a.prefix(s), b.prefix(s));
  for (std::uint64_t n = 0; n < 1000; ++n) EXPECT_EQ(a.shard_of(imei(n)), b.shard_of(imei(n)));
}

// IMEIs share their first eight digits (the TAC): the shard must not follow them.
TEST(KeyShards, ConsecutiveImeisSpreadEvenlyOverTheShards) {
  const key_shards shards = key_shards::cluster(12);
  std::map<std::uint32_t, int> per_shard;
  constexpr int devices = 120000;
  for (int n = 0; n < devices; ++n)
    ++per_shard[shards.shard_of(imei(static_cast<std::uint64_t>(n)))];
  ASSERT_EQ(per_shard.size(), 12U);
  for (const auto& [shard, n] : per_shard) {
    EXPECT_GT(n, devices / 12 * 95 / 100) << "shard " << shard;
    EXPECT_LT(n, devices / 12 * 105 / 100) << "shard " << shard;
  }
}

TEST(KeyShards, ACountOfZeroIsOneShard) {
  EXPECT_EQ(key_shards::cluster(0).count(), 1U);
}

}  // namespace
}  // namespace tgw::infra::redis
