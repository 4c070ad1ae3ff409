// The telemetry writer on a real 3+3 Redis Cluster: a batch of many devices is split
// by key shard, each shard's calls touch keys of one slot only, every op keeps its own
// outcome, resends are still recognised, and the shards' writes spread evenly over the
// masters.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "infra/redis/key_slot.hpp"
#include "infra/telemetry/redis_telemetry_store.hpp"
#include "infra/telemetry/telemetry_keys.hpp"
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

// A device whose shard's slot moved to another master after the store loaded its map:
// its write is answered MOVED, which the store gives back as not stored and safe to
// send again (the writer does, within --persist-retry-ms), and learns the slot's new
// owner; the second try lands there, WAIT included. The other shards' writes go on.
TEST_F(TelemetryStoreOnCluster, AWriteWhoseSlotMovedIsRetryableAndLandsOnTheNewOwner) {
  auto s = store(1, 10s);
  std::string error;
  ASSERT_TRUE(s.load_library(error)) << error;
  const std::string device = imei(1);
  const std::string other = imei(2);
  ASSERT_NE(shards.shard_of(device), shards.shard_of(other));
  // Load the store's map with a first write.
  for (const auto& o :
       s.write_batch({packet_op(device, "warm", 1, 1), packet_op(other, "warm", 1, 1)}))
    ASSERT_TRUE(o.ok) << o.error;
  const std::uint16_t slot = redis::key_slot(keys::telemetry_stream_in(shards.prefix_of(device)));
  const std::uint16_t from = cluster.master_of(slot);
  std::uint16_t to = 0;
  for (int i = 0; i < 3; ++i)
    if (cluster.ports()[static_cast<std::size_t>(i)] != from)
      to = cluster.ports()[static_cast<std::size_t>(i)];
  ASSERT_NE(to, 0);
  const std::string slot_text = std::to_string(slot);
  const std::string from_id = cluster.node(from).command({"CLUSTER", "MYID"}).text;
  const std::string to_id = cluster.node(to).command({"CLUSTER", "MYID"}).text;
  // The slot moves with its keys (the warm-up's), as a reshard moves it.
  auto source = cluster.node(from);
  auto target = cluster.node(to);
  ASSERT_EQ(target.command({"CLUSTER", "SETSLOT", slot_text, "IMPORTING", from_id}).text, "OK");
  ASSERT_EQ(source.command({"CLUSTER", "SETSLOT", slot_text, "MIGRATING", to_id}).text, "OK");
  const auto keys_in = source.command({"CLUSTER", "GETKEYSINSLOT", slot_text, "100"});
  for (const auto& k : keys_in.elements)
    ASSERT_EQ(
        source.command({"MIGRATE", "127.0.0.1", std::to_string(to), k.text, "0", "5000"}).text,
        "OK");
  for (const std::uint16_t port : cluster.ports())
    cluster.node(port).command({"CLUSTER", "SETSLOT", slot_text, "NODE", to_id});
  const auto first =
      s.write_batch({packet_op(device, "moved", 1, 2), packet_op(other, "stays", 1, 2)});
  EXPECT_FALSE(first[0].ok);
  EXPECT_TRUE(first[0].retryable) << first[0].error;
  EXPECT_NE(first[0].error.find("MOVED"), std::string::npos) << first[0].error;
  EXPECT_TRUE(first[1].ok) << first[1].error;
  const auto second = s.write_batch({packet_op(device, "moved", 1, 2)});
  ASSERT_TRUE(second[0].ok) << second[0].error;
  EXPECT_FALSE(second[0].duplicate);
  EXPECT_EQ(cluster.node(to)
                .command({"XLEN", keys::telemetry_stream_in(shards.prefix_of(device))})
                .integer,
            2);
}

// A master killed: its shards' writes fail retryable (a packet resent later is
// recognised by its fingerprint) while the other masters' writes go on; once its
// replica is promoted, the same writes succeed there.
TEST_F(TelemetryStoreOnCluster, AKilledMastersWritesAreRetryableUntilItsReplicaTakesOver) {
  std::vector<write_op> ops;
  for (int d = 0; d < 30; ++d) ops.push_back(packet_op(imei(d), "a", 1, d));
  // On the replicas before the kill, so the promoted one has them.
  auto replicated = store(1, 10s);
  for (const auto& o : replicated.write_batch(ops)) ASSERT_TRUE(o.ok) << o.error;
  // Then without WAIT: the promoted replica has no replica of its own left to confirm.
  auto s = store();
  std::string error;
  ASSERT_TRUE(s.load_library(error)) << error;
  const std::uint16_t victim = cluster.ports()[0];
  cluster.kill(victim);
  for (auto& op : ops) op.packet.fingerprint = "b";
  const auto during = s.write_batch(ops);
  std::size_t failed = 0, ok = 0;
  for (const auto& o : during) {
    if (o.ok) {
      ++ok;
    } else {
      ++failed;
      EXPECT_TRUE(o.retryable) << o.error;
      EXPECT_FALSE(o.unreachable) << o.error;
    }
  }
  EXPECT_GT(failed, 0U);
  EXPECT_GT(ok, 0U);
  // Sent again until the replica is promoted: every write lands, none twice.
  std::vector<write_outcome> after;
  const auto end = std::chrono::steady_clock::now() + 30s;
  do {
    std::this_thread::sleep_for(200ms);
    after = s.write_batch(ops);
  } while (std::any_of(after.begin(), after.end(), [](const auto& o) { return !o.ok; }) &&
           std::chrono::steady_clock::now() < end);
  for (const auto& o : after) EXPECT_TRUE(o.ok) << o.error;
  std::int64_t entries = 0;
  auto c = client();
  for (std::uint32_t shard = 0; shard < shard_count; ++shard)
    entries += c.command({"XLEN", keys::telemetry_stream_in(shards.prefix(shard))}).integer;
  EXPECT_EQ(entries, 60);  // 30 packets, then 30 more, each stored once
}

}  // namespace
}  // namespace tgw::infra::telemetry
