#include "infra/sim/fleet.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "tests/infra/sim/fake_gateway.hpp"

namespace tgw::infra::sim {
namespace {

using std::chrono::milliseconds;
using testing::fake_gateway;
using testing::gateway_behaviour;
using testing::seen_frame;
using testing::seen_reply;

// Small, fast fleets: a few devices, no pauses, short timeouts where the test needs
// them to fire. Tests check counts and bytes, never how long anything took.
fleet_options options_for(const fake_gateway& gateway, std::size_t count = 2,
                          std::uint64_t packets = 2) {
  fleet_options o;
  o.count = count;
  o.packets_per_device = packets;
  o.send_interval = milliseconds{0};
  o.target_port = gateway.port();
  o.reconnect_delay = milliseconds{5};
  o.reconnect_max_delay = milliseconds{20};
  return o;
}

// For tests where a timeout must fire for one copy but not for the next: long enough
// that a loaded machine still ACKs the next copy in time.
constexpr milliseconds patient_timeout{250};

std::string imei_of(const fleet_options& o, std::size_t i) {
  return std::to_string(o.imei_base + i);
}

class FleetCodecs : public ::testing::TestWithParam<codecs::codec_id> {};

TEST_P(FleetCodecs, DeliversEveryPacketWithIncreasingTimestamps) {
  fake_gateway gateway({});
  fleet_options o = options_for(gateway, 3, 3);
  o.codec = GetParam();
  o.records_per_packet = 4;
  o.io_per_record = 6;
  const fleet_report r = fleet::run(o);

  EXPECT_EQ(r.devices, 3u);
  EXPECT_EQ(r.totals.handshakes_accepted, 3u);
  EXPECT_EQ(r.totals.packets_sent, 9u);
  EXPECT_EQ(r.totals.packets_acked, 9u);
  EXPECT_EQ(r.totals.records_sent, 36u);
  EXPECT_EQ(r.totals.records_acked, 36u);
  EXPECT_EQ(r.totals.resends, 0u);
  EXPECT_EQ(r.totals.errors(), 0u);
  EXPECT_EQ(r.totals.devices_finished, 3u);
  EXPECT_EQ(r.totals.packets_unacked, 0u);
  EXPECT_LE(r.ack_p50_ms, r.ack_p99_ms);
  EXPECT_LE(r.ack_p99_ms, r.ack_max_ms);

  for (std::size_t i = 0; i < 3; ++i) {
    const auto frames = gateway.frames_of(imei_of(o, i));
    ASSERT_EQ(frames.size(), 3u) << imei_of(o, i);
    std::uint64_t last = 0;
    for (const seen_frame& f : frames) {
      EXPECT_TRUE(f.crc_ok);
      EXPECT_EQ(f.codec, static_cast<std::uint8_t>(o.codec));
      EXPECT_EQ(f.io_per_record, 6u);
      ASSERT_EQ(f.timestamps.size(), 4u);
      for (const std::uint64_t ts : f.timestamps) {
        EXPECT_GT(ts, last);
        last = ts;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllAvlCodecs, FleetCodecs,
                         ::testing::Values(codecs::codec_id::codec8, codecs::codec_id::codec8e,
                                           codecs::codec_id::codec16));

TEST(Fleet, ResendsTheSameBytesWhenTheAckTimesOut) {
  gateway_behaviour b;
  b.ack_from_copy = 2;  // The first copy of every packet goes unanswered.
  fake_gateway gateway(b);
  fleet_options o = options_for(gateway, 2, 2);
  o.ack_timeout = patient_timeout;
  const fleet_report r = fleet::run(o);

  EXPECT_EQ(r.totals.packets_sent, 4u);
  EXPECT_EQ(r.totals.packets_acked, 4u);
  EXPECT_EQ(r.totals.ack_timeouts, 4u);
  EXPECT_EQ(r.totals.resends, 4u);
  EXPECT_EQ(r.totals.packets_unacked, 0u);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto frames = gateway.frames_of(imei_of(o, i));
    ASSERT_EQ(frames.size(), 4u);
    EXPECT_EQ(frames[0].bytes, frames[1].bytes);
    EXPECT_EQ(frames[2].bytes, frames[3].bytes);
    EXPECT_NE(frames[1].bytes, frames[2].bytes);
  }
}

TEST(Fleet, PacketsNeverAckedAreResentAndReportedUnacked) {
  gateway_behaviour b;
  b.ack = false;
  fake_gateway gateway(b);
  fleet_options o = options_for(gateway, 2, 1);
  o.ack_timeout = milliseconds{20};
  fleet f(o);
  f.start();
  // Three copies of each device's packet, then stop.
  ASSERT_TRUE(gateway.wait_until([&](const std::vector<seen_frame>& frames) {
    for (std::size_t i = 0; i < 2; ++i)
      if (std::count_if(frames.begin(), frames.end(),
                        [&](const seen_frame& s) { return s.imei == imei_of(o, i); }) < 3)
        return false;
    return true;
  }));
  f.stop();
  f.wait();
  const fleet_report r = f.report();

  EXPECT_EQ(r.totals.packets_sent, 2u);
  EXPECT_EQ(r.totals.packets_acked, 0u);
  EXPECT_EQ(r.totals.packets_unacked, 2u);
  EXPECT_GE(r.totals.ack_timeouts, 4u);
  EXPECT_GE(r.totals.resends, 4u);
  EXPECT_EQ(r.totals.devices_finished, 0u);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto frames = gateway.frames_of(imei_of(o, i));
    for (const seen_frame& f2 : frames) EXPECT_EQ(f2.bytes, frames.front().bytes);
  }
}

TEST(Fleet, RejectedHandshakeIsCountedAndStopsTheDevice) {
  gateway_behaviour b;
  b.verdict = codecs::imei_rejected;
  fake_gateway gateway(b);
  const fleet_report r = fleet::run(options_for(gateway, 3, 2));

  EXPECT_EQ(r.totals.connects, 3u);
  EXPECT_EQ(r.totals.handshakes_rejected, 3u);
  EXPECT_EQ(r.totals.handshakes_accepted, 0u);
  EXPECT_EQ(r.totals.packets_sent, 0u);
  EXPECT_EQ(gateway.connections(), 3u);  // No reconnect after a rejection.
  EXPECT_TRUE(gateway.frames().empty());
}

TEST(Fleet, ReconnectsAfterTheGatewayClosesAndResendsTheUnackedPacket) {
  gateway_behaviour b;
  b.close_on_first_frame = true;
  fake_gateway gateway(b);
  fleet_options o = options_for(gateway, 2, 2);
  const fleet_report r = fleet::run(o);

  EXPECT_EQ(r.totals.disconnects, 2u);
  EXPECT_EQ(r.totals.handshakes_accepted, 4u);
  EXPECT_EQ(r.totals.resends, 2u);
  EXPECT_EQ(r.totals.packets_sent, 4u);
  EXPECT_EQ(r.totals.packets_acked, 4u);
  EXPECT_EQ(r.totals.packets_unacked, 0u);
  EXPECT_EQ(gateway.connections(), 4u);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto frames = gateway.frames_of(imei_of(o, i));
    ASSERT_EQ(frames.size(), 3u);
    EXPECT_EQ(frames[0].bytes, frames[1].bytes);  // The same packet on the new connection.
  }
}

TEST(Fleet, WithoutReconnectALostConnectionFinishesTheDevice) {
  gateway_behaviour b;
  b.close_on_first_frame = true;
  fake_gateway gateway(b);
  fleet_options o = options_for(gateway, 1, 2);
  o.reconnect = false;
  const fleet_report r = fleet::run(o);

  EXPECT_EQ(r.totals.disconnects, 1u);
  EXPECT_EQ(r.totals.packets_sent, 1u);
  EXPECT_EQ(r.totals.packets_acked, 0u);
  EXPECT_EQ(r.totals.packets_unacked, 1u);
  EXPECT_EQ(gateway.connections(), 1u);
}

TEST(Fleet, FailedConnectionsAreCounted) {
  std::uint16_t port = 0;
  {
    fake_gateway closed({});  // Take a free port, then free it again.
    port = closed.port();
  }
  fleet_options o;
  o.count = 2;
  o.target_port = port;
  o.reconnect = false;
  const fleet_report r = fleet::run(o);
  EXPECT_EQ(r.totals.connect_failures, 2u);
  EXPECT_EQ(r.totals.connects, 0u);
  EXPECT_EQ(r.totals.packets_sent, 0u);
}

void expect_scripted_replies(const fake_gateway& gateway, const fleet_options& o) {
  for (std::size_t i = 0; i < o.count; ++i) {
    const std::string imei = imei_of(o, i);
    std::vector<seen_reply> mine;
    for (const seen_reply& r : gateway.replies())
      if (r.imei == imei) mine.push_back(r);
    ASSERT_EQ(mine.size(), 3u) << imei;
    EXPECT_EQ(mine[0].codec, 0x0C);
    EXPECT_EQ(mine[0].type, codecs::message_type::response);
    EXPECT_EQ(mine[0].text, "OK getinfo");
    EXPECT_EQ(mine[1].codec, 0x0E);
    EXPECT_EQ(mine[1].type, codecs::message_type::response);
    EXPECT_EQ(mine[1].reply_imei, imei);
    EXPECT_EQ(mine[1].text, "OK getver");
    // Codec 14 for another IMEI: nACK carrying the device's own IMEI and no text.
    EXPECT_EQ(mine[2].codec, 0x0E);
    EXPECT_EQ(mine[2].type, codecs::message_type::nack);
    EXPECT_EQ(mine[2].reply_imei, imei);
    EXPECT_EQ(mine[2].text, "");
  }
}

TEST(Fleet, AnswersCodec12AndCodec14CommandsLikeADevice) {
  gateway_behaviour b;
  b.command_script = true;
  fake_gateway gateway(b);
  fleet_options o = options_for(gateway, 2, 2);
  const fleet_report r = fleet::run(o);

  EXPECT_EQ(r.totals.commands_received, 6u);
  EXPECT_EQ(r.totals.commands_replied, 4u);
  EXPECT_EQ(r.totals.commands_nacked, 2u);
  EXPECT_EQ(r.totals.commands_invalid, 0u);
  EXPECT_EQ(r.totals.packets_acked, 4u);
  EXPECT_EQ(r.totals.ack_mismatches, 0u);
  expect_scripted_replies(gateway, o);
}

TEST(Fleet, DelayedRepliesKeepTheirContent) {
  gateway_behaviour b;
  b.command_script = true;
  fake_gateway gateway(b);
  fleet_options o = options_for(gateway, 1, 2);
  o.reply_delay = milliseconds{10};
  const fleet_report r = fleet::run(o);
  EXPECT_EQ(r.totals.commands_replied, 2u);
  EXPECT_EQ(r.totals.commands_nacked, 1u);
  expect_scripted_replies(gateway, o);
}

TEST(Fleet, ReplyTextIsConfigurable) {
  gateway_behaviour b;
  b.command_after_first_ack = true;
  fake_gateway gateway(b);
  fleet_options o = options_for(gateway, 1, 2);
  o.reply_text = "done: {command}!";
  const fleet_report r = fleet::run(o);
  EXPECT_EQ(r.totals.commands_replied, 1u);
  ASSERT_TRUE(gateway.wait_for_replies(1));
  const auto replies = gateway.replies();
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(replies[0].text, "done: getinfo!");
}

TEST(Fleet, IgnoredCommandsGetNoReply) {
  gateway_behaviour b;
  b.command_after_first_ack = true;
  fake_gateway gateway(b);
  fleet_options o = options_for(gateway, 2, 2);
  o.ignore_command_share = 1.0;
  const fleet_report r = fleet::run(o);
  EXPECT_EQ(r.totals.commands_received, 2u);
  EXPECT_EQ(r.totals.commands_ignored, 2u);
  EXPECT_EQ(r.totals.commands_replied, 0u);
  EXPECT_EQ(r.totals.packets_acked, 4u);
  EXPECT_TRUE(gateway.replies().empty());
}

TEST(Fleet, BadCrcPacketsAreNotAckedThenSentIntactAndNotCountedAsLost) {
  fake_gateway gateway({});
  fleet_options o = options_for(gateway, 2, 2);
  o.bad_crc_share = 1.0;
  o.ack_timeout = patient_timeout;
  const fleet_report r = fleet::run(o);

  EXPECT_EQ(r.totals.bad_crc_sent, 4u);
  EXPECT_EQ(r.totals.bad_crc_unacked, 4u);
  EXPECT_EQ(r.totals.bad_crc_acked, 0u);
  EXPECT_EQ(r.totals.ack_timeouts, 0u);
  EXPECT_EQ(r.totals.resends, 0u);
  EXPECT_EQ(r.totals.packets_sent, 4u);
  EXPECT_EQ(r.totals.packets_acked, 4u);
  EXPECT_EQ(r.totals.packets_unacked, 0u);
  EXPECT_EQ(r.totals.errors(), 0u);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto frames = gateway.frames_of(imei_of(o, i));
    ASSERT_EQ(frames.size(), 4u);
    for (std::size_t k = 0; k < 4; k += 2) {
      EXPECT_FALSE(frames[k].crc_ok);
      EXPECT_TRUE(frames[k + 1].crc_ok);
      // The same packet, only the CRC differs.
      ASSERT_EQ(frames[k].bytes.size(), frames[k + 1].bytes.size());
      EXPECT_TRUE(std::equal(frames[k].bytes.begin(), frames[k].bytes.end() - 1,
                             frames[k + 1].bytes.begin()));
    }
  }
}

TEST(Fleet, ALateAckOfAResendIsNotTakenForAnAckOfABadCrcPacket) {
  gateway_behaviour b;
  b.ack_first_copy_late = true;  // Two ACKs arrive once the intact packet was resent.
  fake_gateway gateway(b);
  fleet_options o = options_for(gateway, 1, 2);
  o.bad_crc_share = 1.0;
  o.ack_timeout = milliseconds{40};
  const fleet_report r = fleet::run(o);

  EXPECT_EQ(r.totals.packets_acked, 2u);
  EXPECT_EQ(r.totals.bad_crc_sent, 2u);
  EXPECT_EQ(r.totals.bad_crc_unacked, 2u);
  EXPECT_EQ(r.totals.bad_crc_acked, 0u);  // The gateway did nothing wrong.
  EXPECT_GE(r.totals.resends, 2u);
}

TEST(Fleet, AckedLogNamesEachAckedPacketByItsRecordTimestamps) {
  fake_gateway gateway({});
  fleet_options o = options_for(gateway, 2, 3);
  o.records_per_packet = 3;
  o.bad_crc_share = 0.5;  // Corrupted copies were never ACKed, so they are not logged.
  o.ack_timeout = patient_timeout;
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("tgw-acked-log-" + std::to_string(::getpid()) + ".txt"))
                               .string();
  o.acked_log_path = path;
  const fleet_report r = fleet::run(o);
  ASSERT_EQ(r.totals.packets_acked, 6u);

  // Expected lines: the intact frames the gateway saw, which it ACKed one for one.
  std::multiset<std::string> expected;
  for (std::size_t i = 0; i < 2; ++i)
    for (const seen_frame& f : gateway.frames_of(imei_of(o, i)))
      if (f.crc_ok)
        expected.insert(imei_of(o, i) + " " + std::to_string(f.timestamps.front()) + " " +
                        std::to_string(f.timestamps.back()) + " 3");
  std::multiset<std::string> logged;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) logged.insert(line);
  std::filesystem::remove(path);
  EXPECT_EQ(logged, expected);
  EXPECT_EQ(logged.size(), 6u);
}

TEST(Fleet, SourceSpreadBindsEachDeviceToALoopbackAddress) {
  fake_gateway gateway({});
  fleet_options o = options_for(gateway, 3, 1);
  o.source_spread = 3;
  const fleet_report r = fleet::run(o);
  EXPECT_EQ(r.totals.packets_acked, 3u);
  EXPECT_EQ(gateway.peer_addresses(),
            (std::set<std::string>{"127.0.0.1", "127.0.0.2", "127.0.0.3"}));
}

TEST(Fleet, SeveralIoThreadsDeliverEverything) {
  fake_gateway gateway({});
  fleet_options o = options_for(gateway, 20, 5);
  o.io_threads = 2;
  o.records_per_packet = 2;
  const fleet_report r = fleet::run(o);
  EXPECT_EQ(r.totals.packets_acked, 100u);
  EXPECT_EQ(r.totals.records_acked, 200u);
  EXPECT_EQ(r.totals.errors(), 0u);
}

TEST(Fleet, UdpDatagramsAreResentUntilTheResponseComes) {
  gateway_behaviour b;
  b.ack_from_copy = 2;
  fake_gateway gateway(b, /*udp=*/true);
  fleet_options o = options_for(gateway, 2, 2);
  o.transport = transport_kind::udp;
  o.ack_timeout = patient_timeout;
  const fleet_report r = fleet::run(o);

  EXPECT_EQ(r.totals.packets_sent, 4u);
  EXPECT_EQ(r.totals.packets_acked, 4u);
  EXPECT_EQ(r.totals.ack_timeouts, 4u);
  EXPECT_EQ(r.totals.resends, 4u);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto frames = gateway.frames_of(imei_of(o, i));
    ASSERT_EQ(frames.size(), 4u);
    EXPECT_TRUE(frames[0].crc_ok);
    EXPECT_EQ(frames[0].bytes, frames[1].bytes);
    EXPECT_EQ(frames[0].udp_packet_id, frames[1].udp_packet_id);
    EXPECT_NE(frames[1].udp_packet_id, frames[2].udp_packet_id);
  }
}

TEST(Fleet, DurationEndsARunThatWouldNotEndOtherwise) {
  fake_gateway gateway({});
  fleet_options o = options_for(gateway, 2, 0);  // No packet limit.
  o.send_interval = milliseconds{5};
  o.duration = milliseconds{100};
  const fleet_report r = fleet::run(o);
  EXPECT_EQ(r.totals.devices_finished, 0u);
  EXPECT_EQ(r.totals.packets_sent, r.totals.packets_acked + r.totals.packets_unacked);
}

TEST(Fleet, SourceSpreadNeedsAnIpv4LoopbackTarget) {
  fleet_options o;
  o.target_host = "::1";
  o.source_spread = 2;
  fleet f(o);
  EXPECT_THROW(f.start(), std::invalid_argument);
}

TEST(Fleet, RejectsInvalidOptions) {
  fleet_options o;
  o.records_per_packet = 0;
  EXPECT_THROW(fleet{o}, std::invalid_argument);
}

}  // namespace
}  // namespace tgw::infra::sim
