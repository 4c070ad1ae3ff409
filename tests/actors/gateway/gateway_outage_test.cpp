// A real `tgw serve` (gateway_fixture.hpp) while Redis cannot take writes: a cluster
// slot without a master, a single node killed mid-stream. Nothing ACKed is lost and
// nothing is stored twice.
#include <gtest/gtest.h>

#include <chrono>

#include "infra/redis/key_slot.hpp"

#include "tests/actors/gateway/gateway_fixture.hpp"

namespace tgw::test::gateway_suite {
namespace {

// On a cluster, a packet whose key shard's slot has no master (CLUSTERDOWN) gets no
// ACK and nothing of it is stored; once the slot is served again, the device's resend
// is ACKed and stored once. The other devices go on meanwhile.
TEST_F(Gateway, OnAClusterAPacketWhoseSlotHasNoMasterIsNotAckedUntilItIsServedAgain) {
  if (!backend.on_cluster()) GTEST_SKIP() << "cluster only";
  start();
  const char* other_imei = "356307042441021";
  ASSERT_NE(backend.prefix(imei_a), backend.prefix(other_imei));
  device d(port);
  d.send(handshake(imei_a));
  ASSERT_EQ(d.receive(1), bytes{0x01});
  device other(port);
  other.send(handshake(other_imei));
  ASSERT_EQ(other.receive(1), bytes{0x01});
  unserved_slot no_master(backend.cluster(), infra::redis::key_slot(backend.prefix(imei_a)));
  ASSERT_TRUE(no_master.taken());
  const bytes pending = packet(1, 1'700'000'000'000);
  d.send(pending);
  EXPECT_FALSE(d.receive(4).has_value()) << "ACKed while its slot had no master";
  EXPECT_EQ(stream_length(), 0);
  other.send(packet(1, 1'700'000'000'000));
  EXPECT_EQ(other.receive(4), ack(1)) << "a device of another shard was held up";
  ASSERT_TRUE(no_master.serve_again());
  ASSERT_TRUE(eventually(
      [&] {
        d.send(pending);
        return d.receive(4) == ack(1);
      },
      20s));
  EXPECT_EQ(telemetry_of(imei_a).elements.size(), 1U);
  EXPECT_EQ(stream_length(), 2);
}

class DurableGateway : public Gateway {
 protected:
  DurableGateway() : Gateway(true) {}
};

TEST_F(DurableGateway, RedisKilledMidStreamLosesNothingAckedAndDoublesNothing) {
  if (backend.on_cluster()) GTEST_SKIP() << "a node outage on a cluster is a failover test";
  start();
  device d(port);
  d.send(handshake(imei_a));
  ASSERT_EQ(d.receive(1), bytes{0x01});
  std::uint64_t t = 1'700'000'000'000;
  int acked = 0;
  for (int i = 0; i < 5; ++i, t += 10'000) {
    d.send(packet(2, t));
    ASSERT_EQ(d.receive(4), ack(2));
    acked += 2;
  }
  ASSERT_EQ(stream_length(), acked);
  server().stop();
  // While Redis is down the device gets no ACK and keeps its records...
  const bytes pending = packet(2, t);
  d.send(pending);
  EXPECT_FALSE(d.receive(4).has_value());
  server().start();
  // ...and resends them, as a tracker does after its ACK timeout, until one is ACKed.
  ASSERT_TRUE(eventually(
      [&] {
        d.send(pending);
        return d.receive(4) == ack(2);
      },
      20s));
  acked += 2;
  redis.command({"PING"});  // the fixture's connection fails once, then reconnects
  EXPECT_EQ(stream_length(), acked);
}

}  // namespace
}  // namespace tgw::test::gateway_suite
