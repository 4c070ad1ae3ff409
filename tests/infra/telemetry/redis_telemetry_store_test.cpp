#include "infra/telemetry/redis_telemetry_store.hpp"
#include "infra/telemetry/telemetry_keys.hpp"

#include <gtest/gtest.h>

#include <map>
#include <thread>

#include "infra/telemetry/projection.hpp"
#include "tests/support/redis_server.hpp"

namespace tgw::infra::telemetry {
namespace {

using namespace std::chrono_literals;

record_fields sample_record(int ts) {
  return {std::to_string(ts), "1", "252616688", "546992512", "105", "90", "12", "40", "239",
          R"({"239":1})"};
}

write_op packet_op(const std::string& imei, const std::string& fingerprint, int records, int ts) {
  write_op op;
  op.packet.imei = imei;
  op.packet.fingerprint = fingerprint;
  for (int i = 0; i < records; ++i) op.packet.records.push_back(sample_record(ts + i));
  return op;
}

write_op event_op(const std::string& imei, const std::string& type, int online) {
  write_op op;
  op.is_packet = false;
  op.event = {imei, type, online, {{"peer", "127.0.0.1:1"}}};
  return op;
}

class TelemetryStore : public ::testing::Test {
 protected:
  redis_telemetry_store store() {
    return redis_telemetry_store({server.endpoint(), 1000ms, 5000ms, "test"}, {"gw-1", 1000, 0});
  }
  std::string device_field(const std::string& imei, const char* field) {
    return redis.command({"HGET", keys::device(imei), field}).text;
  }

  test::redis_server server;
  redis::connection redis = server.connect();
};

// A writer batch is cut into several function calls; every op still gets its own
// outcome, in order, and ops of one device apply in order within the batch.
TEST_F(TelemetryStore, ABatchLargerThanOneCallKeepsEveryOutcomeInOrder) {
  auto s = store();
  std::string error;
  ASSERT_TRUE(s.load_library(error)) << error;
  std::vector<write_op> ops;
  for (int d = 0; d < 100; ++d) {
    const std::string imei = std::to_string(356307040000000 + d);
    ops.push_back(event_op(imei, "identified", 1));
    ops.push_back(packet_op(imei, "fp-" + std::to_string(d), 1 + d % 3, 1000 * d));
  }
  // Device 0 resends its packet in the same batch: recognised, not stored again.
  ops.push_back(packet_op("356307040000000", "fp-0", 1, 0));
  const auto outcomes = s.write_batch(ops);
  ASSERT_EQ(outcomes.size(), ops.size());
  std::int64_t stored = 0;
  for (std::size_t i = 0; i + 1 < ops.size(); ++i) {
    ASSERT_TRUE(outcomes[i].ok) << i << ": " << outcomes[i].error;
    EXPECT_FALSE(outcomes[i].duplicate) << i;
    if (ops[i].is_packet) {
      EXPECT_EQ(outcomes[i].stored, static_cast<std::int64_t>(ops[i].packet.records.size()));
      stored += outcomes[i].stored;
    } else {
      EXPECT_EQ(outcomes[i].stored, 0);
    }
  }
  EXPECT_TRUE(outcomes.back().ok);
  EXPECT_TRUE(outcomes.back().duplicate);
  EXPECT_EQ(redis.command({"XLEN", keys::telemetry_stream}).integer, stored);
  EXPECT_EQ(device_field("356307040000099", "records_total"), "1");
  EXPECT_EQ(device_field("356307040000099", "online"), "1");
  EXPECT_EQ(device_field("356307040000098", "last_fingerprint"), "fp-98");
  const auto journal = redis.command({"XRANGE", keys::journal("356307040000000"), "-", "+"});
  ASSERT_EQ(journal.elements.size(), 3u);
  EXPECT_EQ(journal.elements[2].elements[1].elements[1].text, "packet_resent");
}

// A copy of an older packet that arrives after newer ones (from a session the device
// has left: an instance paused, or a write retried after a failover) is a resend as
// long as it is the latest or one of the three accepted before it: acknowledged, not
// stored a second time. The journal's fold gives the same list as the live function.
TEST_F(TelemetryStore, AnOlderPacketArrivingAfterNewerOnesIsAResendNotStoredTwice) {
  auto s = store();
  std::string error;
  ASSERT_TRUE(s.load_library(error)) << error;
  const std::string imei = "356307040000002";
  for (int p = 1; p <= 9; ++p) {
    const auto o = s.write_batch({packet_op(imei, "fp-" + std::to_string(p), 2, 100 * p)});
    ASSERT_TRUE(o.at(0).ok) << o.at(0).error;
    ASSERT_FALSE(o.at(0).duplicate) << p;
  }
  EXPECT_EQ(device_field(imei, "last_fingerprint"), "fp-9");
  EXPECT_EQ(device_field(imei, "earlier_fingerprints"), "fp-8 fp-7 fp-6");

  const auto stale = s.write_batch({packet_op(imei, "fp-6", 2, 600)});
  ASSERT_TRUE(stale.at(0).ok) << stale.at(0).error;
  EXPECT_TRUE(stale.at(0).duplicate);
  EXPECT_EQ(stale.at(0).stored, 0);
  EXPECT_EQ(redis.command({"XLEN", keys::telemetry_stream}).integer, 18);
  EXPECT_EQ(device_field(imei, "last_fingerprint"), "fp-9");
  EXPECT_EQ(device_field(imei, "earlier_fingerprints"), "fp-8 fp-7 fp-6")
      << "a resend does not move the list";

  // Beyond the window the rule cannot tell: the fifth-latest packet is stored again.
  const auto old = s.write_batch({packet_op(imei, "fp-5", 2, 500)});
  ASSERT_TRUE(old.at(0).ok) << old.at(0).error;
  EXPECT_FALSE(old.at(0).duplicate);
  EXPECT_EQ(device_field(imei, "earlier_fingerprints"), "fp-9 fp-8 fp-7");
  EXPECT_EQ(redis.command({"OBJECT", "ENCODING", keys::device(imei)}).text, "listpack")
      << "the device hash keeps Redis' compact encoding";

  device_projection folded;
  for (const auto& entry : redis.command({"XRANGE", keys::journal(imei), "-", "+"}).elements) {
    field_list fields;
    const auto& f = entry.elements[1].elements;
    for (std::size_t i = 0; i + 1 < f.size(); i += 2) fields.emplace_back(f[i].text, f[i + 1].text);
    telemetry::apply(folded, fields);
  }
  EXPECT_EQ(folded.earlier_fingerprints, device_field(imei, "earlier_fingerprints"));
}

// The projection's position is the newest record's, wherever it sits in the packet,
// and "newest" is by value even where timestamps differ in length (999 < 1000).
TEST_F(TelemetryStore, TheProjectionTakesTheNewestRecordWhateverItsPlace) {
  auto s = store();
  std::string error;
  ASSERT_TRUE(s.load_library(error)) << error;
  write_op op = packet_op("356307040000001", "fp-a", 0, 0);
  for (const int ts : {999, 1000, 998, 10, 1000}) {
    record_fields r = sample_record(ts);
    r[2] = "lon-" + std::to_string(op.packet.records.size());
    op.packet.records.push_back(r);
  }
  const auto outcomes = s.write_batch({op});
  ASSERT_TRUE(outcomes.at(0).ok) << outcomes.at(0).error;
  EXPECT_EQ(device_field("356307040000001", "last_ts"), "1000");
  EXPECT_EQ(device_field("356307040000001", "lon"), "lon-1");  // the first of the two 1000s
  const auto journal = redis.command({"XRANGE", keys::journal("356307040000001"), "-", "+"});
  ASSERT_EQ(journal.elements.size(), 1u);
  const auto& fields = journal.elements[0].elements[1].elements;
  std::map<std::string, std::string> event;
  for (std::size_t i = 0; i + 1 < fields.size(); i += 2) event[fields[i].text] = fields[i + 1].text;
  EXPECT_EQ(event["first_ts"], "999");
  EXPECT_EQ(event["last_ts"], "1000");
  EXPECT_EQ(event["pos_ts"], "1000");
}

TEST_F(TelemetryStore, RedisDownFailsEveryOpWithAnIoErrorAndRecovers) {
  auto s = store();
  std::string error;
  ASSERT_TRUE(s.load_library(error)) << error;
  server.stop();
  const auto down = s.write_batch({packet_op("356307040000001", "fp", 1, 0)});
  ASSERT_EQ(down.size(), 1u);
  EXPECT_FALSE(down[0].ok);
  EXPECT_EQ(down[0].failure, ports::failure_kind::unreachable) << down[0].error;
  EXPECT_TRUE(down[0].unreachable);
  EXPECT_TRUE(down[0].retryable) << "a packet: its resend is recognised by its fingerprint";
  // A restarted Redis has lost the function library; the store loads it again.
  server.start();
  const auto up = s.write_batch({packet_op("356307040000001", "fp", 1, 0)});
  ASSERT_EQ(up.size(), 1u);
  EXPECT_TRUE(up[0].ok) << up[0].error;
  EXPECT_EQ(up[0].stored, 1);
}

/// A master and one replica of it, plain redis-servers on free ports.
class ReplicatedTelemetryStore : public ::testing::Test {
 protected:
  void SetUp() override { follow(); }
  void follow() {
    ASSERT_EQ(
        replica.connect().command({"REPLICAOF", "127.0.0.1", std::to_string(master.port())}).text,
        "OK");
    ASSERT_TRUE(synced());
  }
  bool synced() {
    const auto end = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < end) {
      const auto info = replica.connect().command({"INFO", "replication"}).text;
      if (info.find("master_link_status:up") != std::string::npos) return true;
      std::this_thread::sleep_for(50ms);
    }
    return false;
  }
  redis_telemetry_store store(int replicas) {
    return redis_telemetry_store({master.endpoint(), 1000ms, 5000ms, "test"},
                                 {"gw-1", 1000, 0, replicas, 300ms});
  }

  test::redis_server master;
  test::redis_server replica;
};

TEST_F(ReplicatedTelemetryStore, APacketIsPersistedOnlyOnceAReplicaHasIt) {
  auto s = store(1);
  const auto ok = s.write_batch({packet_op("356307042441013", "fp-1", 2, 1000)});
  ASSERT_TRUE(ok.at(0).ok) << ok.at(0).error;
  EXPECT_FALSE(ok.at(0).under_replicated);
  EXPECT_EQ(replica.connect().command({"XLEN", keys::telemetry_stream}).integer, 2);

  // The replica is gone: stored on the master, but not confirmed, so not persisted; a
  // journal event in the same batch waits for replicas as the packet does (it explains
  // an ACK, and must be as durable as the ACK).
  replica.stop();
  const auto short_of_replicas = s.write_batch({event_op("356307042441013", "identified", 1),
                                                packet_op("356307042441013", "fp-2", 1, 5000)});
  EXPECT_FALSE(short_of_replicas.at(0).ok);
  EXPECT_TRUE(short_of_replicas.at(0).under_replicated);
  EXPECT_FALSE(short_of_replicas.at(1).ok);
  EXPECT_TRUE(short_of_replicas.at(1).under_replicated);
  EXPECT_NE(short_of_replicas.at(1).error.find("WAIT confirmed 0 of 1"), std::string::npos)
      << short_of_replicas.at(1).error;

  // The replica is back: the device's resends are recognised, and one is confirmed as
  // soon as the master has the replica's first acknowledgement (it sends one a second).
  replica.start();
  follow();
  std::vector<write_outcome> resent;
  const auto end = std::chrono::steady_clock::now() + 10s;
  do {
    resent = s.write_batch({packet_op("356307042441013", "fp-2", 1, 5000)});
  } while (!resent.at(0).ok && std::chrono::steady_clock::now() < end);
  ASSERT_TRUE(resent.at(0).ok) << resent.at(0).error;
  EXPECT_TRUE(resent.at(0).duplicate);
  EXPECT_EQ(master.connect().command({"XLEN", keys::telemetry_stream}).integer, 3);
}

TEST_F(ReplicatedTelemetryStore, ZeroReplicasNeverWaits) {
  replica.stop();
  auto s = store(0);
  const auto outcome = s.write_batch({packet_op("356307042441013", "fp-1", 1, 1000)});
  EXPECT_TRUE(outcome.at(0).ok) << outcome.at(0).error;
}

}  // namespace
}  // namespace tgw::infra::telemetry
