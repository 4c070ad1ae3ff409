// The device port of a real `tgw serve` (gateway_fixture.hpp): handshakes, the ACK
// after every field is stored, frames cut or merged anywhere, bad frames, resends and
// timeouts.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/actors/gateway/gateway_fixture.hpp"

namespace tgw::test::gateway_suite {
namespace {

TEST_F(Gateway, AcceptsAHandshakeAndJournalsIt) {
  start();
  device d(port);
  d.send(handshake(imei_a));
  EXPECT_EQ(d.receive(1), bytes{0x01});
  EXPECT_EQ(journal_types(imei_a), std::vector<std::string>{"identified"});
  EXPECT_EQ(redis.command({"HGET", device_key(imei_a), "online"}).text, "1");
}

TEST_F(Gateway, RejectsAnImeiOutsideTheAllowlist) {
  const std::string list = ::testing::TempDir() + "/allowlist.txt";
  std::ofstream(list) << "# allowed\n356307042441013\n";
  start({"--allowlist", list});
  device allowed(port);
  allowed.send(handshake(imei_a));
  EXPECT_EQ(allowed.receive(1), bytes{0x01});
  device other(port);
  other.send(handshake("123456789012345"));
  EXPECT_EQ(other.receive(1), bytes{0x00});
  EXPECT_TRUE(other.closed_by_server());
}

TEST_F(Gateway, AcksTheRecordCountAfterStoringEveryField) {
  start();
  device d(port);
  d.send(handshake(imei_a));
  ASSERT_EQ(d.receive(1), bytes{0x01});
  d.send(packet(3, 1'700'000'000'000));
  EXPECT_EQ(d.receive(4), ack(3));
  ASSERT_EQ(stream_length(), 3);
  const auto entries = telemetry_of(imei_a);
  const auto& fields = entries.elements.at(1).elements.at(1).elements;
  std::map<std::string, std::string> f;
  for (std::size_t i = 0; i + 1 < fields.size(); i += 2) f[fields[i].text] = fields[i + 1].text;
  EXPECT_EQ(f["imei"], imei_a);
  EXPECT_EQ(f["ts"], "1700000001000");
  EXPECT_EQ(f["pri"], "1");
  EXPECT_EQ(f["lon"], "252616689");
  EXPECT_EQ(f["lat"], "546992511");
  EXPECT_EQ(f["alt"], "105");
  EXPECT_EQ(f["ang"], "90");
  EXPECT_EQ(f["sat"], "12");
  EXPECT_EQ(f["spd"], "41");
  EXPECT_EQ(f["evt"], "239");
  EXPECT_EQ(f["io"], R"([[239,"1",1],[66,"12345",2],[16,"987654",4]])");
  EXPECT_EQ(f["v"], "4");
  EXPECT_EQ(f["codec"], "8E");
  EXPECT_EQ(f["gen"], "");
}

// Connections are spread over the io threads, one io_context each; devices on every
// thread get their ACKs, and a device's packets stay in order on its thread. The
// writers linger for more writes before each batch, which delays ACKs, not loses them.
TEST_F(Gateway, DevicesSpreadOverSeveralIoThreadsAreAllServed) {
  start({"--io-threads", "3", "--actor-threads", "2", "--writer-shards", "2", "--writer-linger-us",
         "500"});
  std::vector<std::unique_ptr<device>> devices;
  for (int i = 0; i < 7; ++i) {
    devices.push_back(std::make_unique<device>(port));
    devices.back()->send(handshake(std::to_string(356307042441100 + i).c_str()));
    ASSERT_EQ(devices.back()->receive(1), bytes{0x01}) << i;
  }
  for (std::uint64_t round = 0; round < 3; ++round)
    for (std::size_t i = 0; i < devices.size(); ++i) {
      devices[i]->send(packet(2, 1'700'000'000'000 + 10'000 * round));
      EXPECT_EQ(devices[i]->receive(4), ack(2)) << "device " << i << ", round " << round;
    }
  EXPECT_EQ(stream_length(), 7 * 3 * 2);
}

TEST_F(Gateway, FramesSplitAnywhereOrMergedAreHandledAlike) {
  start();
  device d(port);
  bytes first = handshake(imei_a);
  const bytes p = packet(2, 1'700'000'100'000, codecs::codec_id::codec8);
  // Handshake and the first bytes of the packet in one write, the rest byte by byte.
  first.insert(first.end(), p.begin(), p.begin() + 5);
  d.send(first);
  ASSERT_EQ(d.receive(1), bytes{0x01});
  for (std::size_t i = 5; i < p.size(); ++i) d.send({p[i]});
  EXPECT_EQ(d.receive(4), ack(2));
  // A keep-alive byte and a Codec 16 packet in one write.
  bytes merged{0xFF};
  const bytes q = packet(1, 1'700'000'200'000, codecs::codec_id::codec16);
  merged.insert(merged.end(), q.begin(), q.end());
  d.send(merged);
  EXPECT_EQ(d.receive(4), ack(1));
  EXPECT_EQ(stream_length(), 3);
}

// A connection reads a bounded chunk at a time and stops reading while a frame awaits
// its ACK. Bytes left in the socket when reading stopped must be read when it resumes,
// without waiting for more to arrive: the device sends nothing more until it has its
// ACKs.
TEST_F(Gateway, ABurstOfSeveralReadsIsAllReadWhileAtMostOneFrameIsInFlight) {
  start({"--max-frames-in-flight", "1"});
  device d(port);
  d.send(handshake(imei_a));
  ASSERT_EQ(d.receive(1), bytes{0x01});
  bytes burst;
  for (int i = 0; i < 8; ++i) {
    const bytes p = packet(10, 1'700'000'000'000 + static_cast<std::uint64_t>(i) * 100'000);
    burst.insert(burst.end(), p.begin(), p.end());
  }
  ASSERT_GT(burst.size(), 3000U) << "the burst must span several reads";
  d.send(burst);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(d.receive(4), ack(10)) << "packet " << i;
  EXPECT_EQ(stream_length(), 80);
}

TEST_F(Gateway, ABadCrcGetsNoAckAndIsJournaled) {
  start();
  device d(port);
  d.send(handshake(imei_a));
  ASSERT_EQ(d.receive(1), bytes{0x01});
  bytes bad = packet(1, 1'700'000'000'000);
  bad.back() ^= 0x01;
  d.send(bad);
  EXPECT_FALSE(d.receive(4).has_value());
  EXPECT_EQ(stream_length(), 0);
  // The session goes on: a good packet is ACKed, and it ends the spell of bad frames,
  // which is journaled once, ahead of the packet's records.
  d.send(packet(1, 1'700'000'000'000));
  EXPECT_EQ(d.receive(4), ack(1));
  EXPECT_TRUE(eventually([&] {
    return journal_types(imei_a) ==
           std::vector<std::string>{"identified", "frame_rejected", "records_accepted"};
  }));
}

TEST_F(Gateway, AResentPacketIsAckedAndStoredOnce) {
  start();
  const bytes p = packet(2, 1'700'000'000'000);
  {
    device d(port);
    d.send(handshake(imei_a));
    ASSERT_EQ(d.receive(1), bytes{0x01});
    d.send(p);
    ASSERT_EQ(d.receive(4), ack(2));
  }
  // The ACK was "lost": the device reconnects and sends the same packet again.
  device again(port);
  again.send(handshake(imei_a));
  ASSERT_EQ(again.receive(1), bytes{0x01});
  again.send(p);
  EXPECT_EQ(again.receive(4), ack(2));
  EXPECT_EQ(stream_length(), 2);
  EXPECT_EQ(redis.command({"HGET", device_key(imei_a), "records_total"}).text, "2");
}

TEST_F(Gateway, ClosesAnOversizeLengthAStalledHandshakeAndAnIdleSocket) {
  start({"--handshake-timeout-ms", "300", "--idle-timeout-s", "1", "--max-frame-size", "2048"});
  device stalled(port);
  stalled.send({0x00});  // half a handshake, then nothing
  EXPECT_TRUE(stalled.closed_by_server());

  device oversize(port);
  oversize.send(handshake(imei_a));
  ASSERT_EQ(oversize.receive(1), bytes{0x01});
  oversize.send({0, 0, 0, 0, 0, 0x10, 0, 0});  // declares 1 MiB
  EXPECT_TRUE(oversize.closed_by_server());

  device idle(port);
  idle.send(handshake("123456789012345"));
  ASSERT_EQ(idle.receive(1), bytes{0x01});
  EXPECT_TRUE(idle.closed_by_server());
  EXPECT_TRUE(eventually([&] {
    const auto t = journal_types("123456789012345");
    return !t.empty() && t.back() == "disconnected";
  }));
  const auto events =
      redis.command({"XREVRANGE", journal("123456789012345"), "+", "-", "COUNT", "1"});
  const auto& fields = events.elements.at(0).elements.at(1).elements;
  EXPECT_EQ(fields.back().text, "idle timeout");
}

}  // namespace
}  // namespace tgw::test::gateway_suite
