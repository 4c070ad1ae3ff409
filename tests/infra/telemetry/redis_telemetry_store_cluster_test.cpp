// The telemetry writer on a real 3+3 Redis Cluster: a batch of many devices is split
// by key shard, each shard's calls touch keys of one slot only, every op keeps its own
// outcome, resends are still recognised, and the shards' writes spread evenly over the
// masters.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "infra/redis/key_slot.hpp"
#include "infra/telemetry/redis_telemetry_store.hpp"
#include "tests/support/redis_cluster.hpp"

namespace tgw::infra::telemetry {
namespace {

using namespace std::chrono_literals;
using test::redis_cluster;

constexpr std::uint32_t shard_count = 12;

record_fields sample_record(int ts) {
  return {std::to_string(ts), "1", "252616688", "546992512", "105", "90", "12", "40", "239",
          R"({"239":1})",     ""};
}

write_op packet_op(const std::string& imei, const std::string& fingerprint, int records, int ts) {
  write_op op;
  op.packet.imei = imei;
  op.packet.fingerprint = fingerprint;
  op.packet.codec = "8E";
  for (int i = 0; i < records; ++i) op.packet.records.push_back(sample_record(ts + i));
  return op;
}

write_op event_op(const std::string& imei) {
  write_op op;
  op.is_packet = false;
  op.event = {imei, "identified", 1, {{"peer", "127.0.0.1:1"}}};
  return op;
}

std::string imei(int n) {
  return std::to_string(356307040000000 + n);
}

class TelemetryStoreOnCluster : public ::testing::Test {
 protected:
  redis_telemetry_store store(int ack_replicas = 0,
                              std::chrono::milliseconds wait_timeout = 300ms) {
    store_settings s{"gw-1", 1000, 0, 0, 1000ms, shards};
    s.ack_replicas = ack_replicas;
    s.ack_replicas_timeout = wait_timeout;
    return redis_telemetry_store({cluster.endpoint(), 1000ms, 5000ms, "test"}, s);
  }
  redis::connection client() {
    return redis::connection({cluster.endpoint(), 1000ms, 5000ms, "check"});
  }

  redis_cluster cluster;
  redis::key_shards shards = redis::key_shards::cluster(shard_count);
};

TEST_F(TelemetryStoreOnCluster, EachOpOfAManyDeviceBatchLandsInItsShardWithItsOwnOutcome) {
  auto s = store();
  std::string error;
  ASSERT_TRUE(s.load_library(error)) << error;
  std::vector<write_op> ops;
  constexpr int devices = 300;
  for (int d = 0; d < devices; ++d) {
    ops.push_back(event_op(imei(d)));
    // 1, 2 or 3 records: an outcome given to the wrong op would show a wrong count.
    ops.push_back(packet_op(imei(d), "fp-" + std::to_string(d), 1 + d % 3, 1000 * d));
  }
  ops.push_back(packet_op(imei(7), "fp-7", 2, 7000));  // a resend in the same batch
  const auto outcomes = s.write_batch(ops);
  ASSERT_EQ(outcomes.size(), ops.size());
  std::int64_t stored = 0;
  for (std::size_t i = 0; i + 1 < ops.size(); ++i) {
    ASSERT_TRUE(outcomes[i].ok) << i << ": " << outcomes[i].error;
    EXPECT_FALSE(outcomes[i].duplicate) << i;
    const std::int64_t expected =
        ops[i].is_packet ? static_cast<std::int64_t>(ops[i].packet.records.size()) : 0;
    EXPECT_EQ(outcomes[i].stored, expected) << i;
    stored += outcomes[i].stored;
  }
  EXPECT_TRUE(outcomes.back().ok);
  EXPECT_TRUE(outcomes.back().duplicate);

  redis::connection c = client();
  std::int64_t in_streams = 0;
  for (std::uint32_t shard = 0; shard < shard_count; ++shard) {
    const std::string stream = keys::telemetry_stream_in(shards.prefix(shard));
    const auto entries = c.command({"XRANGE", stream, "-", "+"});
    in_streams += static_cast<std::int64_t>(entries.elements.size());
    for (const auto& e : entries.elements) {
      const auto& fields = e.elements[1].elements;
      for (std::size_t f = 0; f + 1 < fields.size(); f += 2) {
        if (fields[f].text == "imei") {
          EXPECT_EQ(shards.shard_of(fields[f + 1].text), shard) << fields[f + 1].text;
        }
      }
    }
  }
  EXPECT_EQ(in_streams, stored);
  for (const int d : {0, 7, 299}) {
    const std::string& prefix = shards.prefix_of(imei(d));
    EXPECT_EQ(c.command({"HGET", keys::device(imei(d), prefix), "records_total"}).text,
              std::to_string(1 + d % 3));
    EXPECT_EQ(c.command({"XLEN", keys::journal(imei(d), prefix)}).integer, d == 7 ? 3 : 2);
    // No key under the single-node name.
    EXPECT_EQ(c.command({"EXISTS", keys::device(imei(d))}).integer, 0);
  }
}

// With 3 masters and 12 shards, each master holds 4 shards and so about a third of the
// devices' writes.
TEST_F(TelemetryStoreOnCluster, EachMasterTakesAThirdOfTheWritesWithinTenPercent) {
  auto s = store();
  std::vector<write_op> ops;
  constexpr int devices = 3000;
  for (int d = 0; d < devices; ++d) ops.push_back(packet_op(imei(d), "fp", 1, d));
  for (const auto& o : s.write_batch(ops)) ASSERT_TRUE(o.ok) << o.error;
  std::map<std::uint16_t, std::int64_t> per_master;
  redis::connection c = client();
  for (std::uint32_t shard = 0; shard < shard_count; ++shard) {
    const std::string stream = keys::telemetry_stream_in(shards.prefix(shard));
    per_master[cluster.master_of(redis::key_slot(stream))] += c.command({"XLEN", stream}).integer;
  }
  ASSERT_EQ(per_master.size(), 3U);
  for (const auto& [port, n] : per_master) {
    EXPECT_GT(n, devices / 3 * 9 / 10) << "master " << port;
    EXPECT_LT(n, devices / 3 * 11 / 10) << "master " << port;
  }
}

// --ack-replicas on a cluster: each shard's WAIT follows its writes to their master.
// One replica per master confirms 1; asking for 2 leaves every packet unACKed.
TEST_F(TelemetryStoreOnCluster, AckReplicasWaitsOnTheMastersThatWereWritten) {
  std::vector<write_op> ops;
  for (int d = 0; d < 60; ++d) ops.push_back(packet_op(imei(d), "a", 1, d));
  // Long enough for a replica of a busy box; the call returns as soon as it confirms.
  auto one = store(1, 10s);
  for (const auto& o : one.write_batch(ops)) EXPECT_TRUE(o.ok) << o.error;
  for (auto& op : ops) op.packet.fingerprint = "b";
  auto two = store(2);
  for (const auto& o : two.write_batch(ops)) {
    EXPECT_FALSE(o.ok);
    EXPECT_TRUE(o.under_replicated) << o.error;
  }
}

}  // namespace
}  // namespace tgw::infra::telemetry
